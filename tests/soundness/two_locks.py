"""Racy: each actor bumps ``count`` under a lock, but each under a lock of its own; a bump is lost.

Two locks exclude nothing from each other: the lockset the two accesses share is empty.
"""

from lab import Scenario, acceptable, actor, forbidden


class TwoLocks(Scenario):
    source = "soundness suite: two different locks"
    line_modules = (__name__,)
    outcomes = (
        acceptable("both bumps landed", count=2),
        forbidden("a bump was lost: both read 0", count=1),
    )

    def setup(self) -> None:
        self.count = 0
        self.guard_a = self.lab.lock("guard-a")
        self.guard_b = self.lab.lock("guard-b")

    @actor
    def a(self) -> None:
        with self.guard_a:
            n = self.count
            self.count = n + 1

    @actor
    def b(self) -> None:
        with self.guard_b:
            n = self.count
            self.count = n + 1

    def observe(self) -> dict[str, int]:
        return {"count": self.count}
