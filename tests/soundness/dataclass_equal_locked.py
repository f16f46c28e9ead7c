"""Correct twin of dataclass_equal: the comparison waits for the add (the actors hand over through a latch)."""

from dataclasses import dataclass, field

from lab import Scenario, acceptable, actor, forbidden


@dataclass
class _Cart:
    items: list[str] = field(default_factory=list)


class DataclassEqualLocked(Scenario):
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
        self.added = self.lab.latch("added")

    @actor
    def a(self) -> None:
        self.left.items.append("tea")
        self.added.count_down()

    @actor
    def b(self) -> None:
        self.added.wait()
        self.same = self.left == self.right

    def observe(self) -> dict[str, object]:
        return {"same": self.same}
