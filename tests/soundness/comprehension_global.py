"""Racy: an actor reads a module global inside a list comprehension while the other sets it; the read may come first.

Python 3.12 inlines list, set and dict comprehensions (PEP 709): the comprehension has no scope of its own there,
and the global it reads is the enclosing function's global."""

from lab import Scenario, acceptable, actor, forbidden

COUNT = 0


class ComprehensionGlobal(Scenario):
    source = "soundness suite: a global read inside a comprehension"
    line_modules = (__name__,)
    outcomes = (
        acceptable("read after the update", seen=[1]),
        forbidden("read before the update", seen=[0]),
    )

    def setup(self) -> None:
        global COUNT
        COUNT = 0
        self.seen: list[int] = []

    @actor
    def a(self) -> None:
        self.seen = [COUNT for _ in (0,)]

    @actor
    def b(self) -> None:
        global COUNT
        COUNT = 1

    def observe(self) -> dict[str, list[int]]:
        return {"seen": self.seen}
