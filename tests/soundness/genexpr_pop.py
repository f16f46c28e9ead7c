"""Racy: a takes two items from a generator expression over a shared list, on two lines; b pops the head between.

A generator expression iterates its list only as items are taken: the pop can fall between the two.
"""

from lab import Scenario, acceptable, actor, forbidden


class GenexprPop(Scenario):
    source = "soundness suite: a generator expression over a shared list"
    line_modules = (__name__,)
    outcomes = (
        acceptable("b popped first", got="20,30"),
        acceptable("a took both first", got="10,20"),
        forbidden("b popped between: the second item skipped", got="10,30"),
    )

    def setup(self) -> None:
        self.items = [1, 2, 3]
        self.got = ""

    @actor
    def a(self) -> None:
        tens = (x * 10 for x in self.items)
        first = next(tens)
        second = next(tens)
        self.got = f"{first},{second}"

    @actor
    def b(self) -> None:
        self.items.pop(0)

    def observe(self) -> dict[str, str]:
        return {"got": self.got}
