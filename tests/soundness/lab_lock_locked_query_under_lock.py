"""Correct twin of lab_lock_locked_query: b reads the phase under the lock, then asks; a b that read phase 2 read
it after a's section, and a does not take the lock again."""

from lab import Scenario, acceptable, actor, forbidden


class LabLockLockedQueryUnderLock(Scenario):
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
        with self.guard:
            phase = self.phase
        return f"{self.guard.locked()}@{phase}"
