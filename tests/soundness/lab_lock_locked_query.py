"""Racy: b asks the lab lock's ``locked()`` and then reads the phase; what it sees depends on where a is.

The query reads the lock: it races with a's acquisition and with a's release, which the explorer must both reverse
(a release commutes with every acquisition and release, but not with a query).
"""

from lab import Scenario, acceptable, actor, forbidden


class LabLockLockedQuery(Scenario):
    source = "soundness suite: a lab lock query inside another actor's critical section"
    line_modules = (__name__,)
    outcomes = (
        forbidden("b saw the lock still held after a's last write (phase 2)", b="True@2"),
        acceptable("b saw a before, during or after its section"),
    )

    def setup(self) -> None:
        self.guard = self.lab.lock("guard")
        self.half_way = self.lab.event("half-way")
        self.phase = 0

    @actor
    def a(self) -> None:
        with self.guard:
            self.phase = 1
            self.half_way.set()
            self.phase = 2

    @actor
    def b(self) -> str:
        return f"{self.guard.locked()}@{self.phase}"
