"""Racy: check-then-act through bound methods stored in setup (``self.size()``, ``self.push(x)``); two items.

The actors never name the list: ``self.push`` is its ``append`` and ``self.size`` its ``__len__``.
"""

from lab import Scenario, acceptable, actor, forbidden


class BoundMethod(Scenario):
    source = "soundness suite: bound methods of a shared list"
    line_modules = (__name__,)
    outcomes = (
        acceptable("exactly one item was pushed", size=1),
        forbidden("both saw an empty list and pushed", size=2),
    )

    def setup(self) -> None:
        items: list[str] = []
        self.push = items.append
        self.size = items.__len__

    @actor
    def a(self) -> None:
        if self.size() == 0:
            self.push("a")

    @actor
    def b(self) -> None:
        if self.size() == 0:
            self.push("b")

    def observe(self) -> dict[str, int]:
        return {"size": self.size()}
