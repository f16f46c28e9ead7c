"""Correct twin of one_sided_lock and two_locks: both actors bump ``count`` under the same lab lock."""

from lab import Scenario, acceptable, actor, forbidden


class CounterOneLock(Scenario):
    source = "soundness suite: one lock both sides take"
    line_modules = (__name__,)
    outcomes = (
        acceptable("both bumps landed", count=2),
        forbidden("a bump was lost: both read 0", count=1),
    )

    def setup(self) -> None:
        self.count = 0
        self.guard = self.lab.lock("guard")

    @actor
    def a(self) -> None:
        with self.guard:
            n = self.count
            self.count = n + 1

    @actor
    def b(self) -> None:
        with self.guard:
            n = self.count
            self.count = n + 1

    def observe(self) -> dict[str, int]:
        return {"count": self.count}
