"""Correct twin of for_target_global: each actor reads and stores the global under one lab lock."""

from lab import Scenario, acceptable, actor, forbidden

COUNT = 0


class ForTargetGlobalLocked(Scenario):
    source = "soundness suite: a module global stored by a for target"
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
            for COUNT in [n + 1]:  # noqa: B007 (the global is the point: stored by the loop)
                pass

    @actor
    def b(self) -> None:
        global COUNT
        with self.guard:
            n = COUNT
            for COUNT in [n + 1]:  # noqa: B007 (the global is the point: stored by the loop)
                pass

    def observe(self) -> dict[str, int]:
        return {"count": COUNT}
