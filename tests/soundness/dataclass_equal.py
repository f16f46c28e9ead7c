"""Racy: one actor adds to a list held by a dataclass, the other compares two instances with ``==``.

A dataclass's ``__eq__`` is generated code (compiled from ``<string>``, never rewritten): it compares the
instances' fields, so it reads ``self.left.items`` although nothing in the comparing actor names it.
"""

from dataclasses import dataclass, field

from lab import Scenario, acceptable, actor, forbidden


@dataclass
class _Cart:
    items: list[str] = field(default_factory=list)


class DataclassEqual(Scenario):
    source = "soundness suite: a dataclass compared"
    line_modules = (__name__,)
    outcomes = (
        acceptable("compared after the add", same=False),
        forbidden("compared before the add", same=True),
    )

    def setup(self) -> None:
        self.left = _Cart()
        self.right = _Cart()
        self.same: bool | None = None

    @actor
    def a(self) -> None:
        self.left.items.append("tea")

    @actor
    def b(self) -> None:
        self.same = self.left == self.right

    def observe(self) -> dict[str, object]:
        return {"same": self.same}
