"""Racy: check-then-act where one actor appends through a bound method passed to ``map``; two items.

``list(map(self.items.append, ["a"]))`` never names the list as an argument: ``map`` is handed only the bound
method, and the list it appends to is its receiver.
"""

from lab import Scenario, acceptable, actor, forbidden


class PassedBoundMethod(Scenario):
    source = "soundness suite: a bound method passed as an argument"
    line_modules = (__name__,)
    outcomes = (
        acceptable("exactly one item was appended", size=1),
        forbidden("both saw an empty list and appended", size=2),
    )

    def setup(self) -> None:
        self.items: list[str] = []

    @actor
    def a(self) -> None:
        if not self.items:
            list(map(self.items.append, ["a"]))

    @actor
    def b(self) -> None:
        if not self.items:
            self.items.append("b")

    def observe(self) -> dict[str, int]:
        return {"size": len(self.items)}
