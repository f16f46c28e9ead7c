"""Correct twin of global_counter: the module global is read and written under one lab lock."""

from lab import Scenario, acceptable, actor, forbidden

COUNT = 0


class GlobalCounterLocked(Scenario):
    source = "soundness suite: a module global"
    line_modules = (__name__,)
    outcomes = (
        acceptable("both increments landed", count=2),
        forbidden("an increment was lost: both read 0", count=1),
    )

    def setup(self) -> None:
        global COUNT
        COUNT = 0
        self.guard = self.lab.lock("guard")

    @actor
    def a(self) -> None:
        global COUNT
        with self.guard:
            n = COUNT
            COUNT = n + 1

    @actor
    def b(self) -> None:
        global COUNT
        with self.guard:
            n = COUNT
            COUNT = n + 1

    def observe(self) -> dict[str, int]:
        return {"count": COUNT}
