"""Racy: only one of the two actors takes the lock around its read-modify-write of ``count``; a bump is lost.

A lock protects nothing unless every access to the state holds it.
"""

from lab import Scenario, acceptable, actor, forbidden


class OneSidedLock(Scenario):
    source = "soundness suite: a lock only one side takes"
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
        n = self.count
        self.count = n + 1

    def observe(self) -> dict[str, int]:
        return {"count": self.count}
