"""Racy: both actors check a list, then pop it, one through a ``functools.partial`` of its ``pop``: IndexError.

``self.take = partial(self.items.pop, 0)`` hides the list: calling ``self.take()`` names only the partial.
"""

import functools

from lab import Scenario, acceptable, actor, forbidden


class PartialMethod(Scenario):
    source = "soundness suite: a partial of a bound method"
    line_modules = (__name__,)
    outcomes = (
        acceptable("one of them popped the item", a="DONE", b="DONE"),
        forbidden("b popped an empty list", b="ERROR"),
        forbidden("a popped an empty list", a="ERROR"),
    )

    def setup(self) -> None:
        self.items = [1]
        self.take = functools.partial(self.items.pop, 0)

    @actor
    def a(self) -> None:
        if self.items:
            self.take()

    @actor
    def b(self) -> None:
        if self.items:
            self.items.pop()

    def observe(self) -> dict[str, int]:
        return {"left": len(self.items)}
