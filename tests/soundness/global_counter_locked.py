"""Correct twin of global_counter: the module global is read and written under one lab lock."""

from lab import Scenario, acceptable, forbidden

COUNT = 0


class GlobalCounterLocked(Scenario):
    source = "soundness suite: a module global"
    actors = ("a", "b")
    line_modules = (__name__,)
    outcomes = (
        acceptable("both increments landed", count=2),
        forbidden("an increment was lost: both read 0", count=1),
    )

    def setup(self) -> None:
        global COUNT
        COUNT = 0
        self.guard = self.lab.lock("guard")

    def a(self) -> None:
        global COUNT
        with self.guard:
            n = COUNT
            COUNT = n + 1

    def b(self) -> None:
        global COUNT
        with self.guard:
            n = COUNT
            COUNT = n + 1

    def observe(self) -> dict[str, int]:
        return {"count": COUNT}
