"""Correct twin of walrus_global: each actor reads and stores the global under one lab lock."""

from lab import Scenario, acceptable, actor, forbidden

COUNT = 0


class WalrusGlobalLocked(Scenario):
    source = "soundness suite: a module global stored by a walrus"
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
            [COUNT := n + 1 for _ in "x"]

    @actor
    def b(self) -> None:
        global COUNT
        with self.guard:
            n = COUNT
            [COUNT := n + 1 for _ in "x"]

    def observe(self) -> dict[str, int]:
        return {"count": COUNT}
