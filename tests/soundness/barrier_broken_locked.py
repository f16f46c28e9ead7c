"""Correct twin of barrier_broken: a's flag and act, and b's check and read, each under one lab lock."""

import threading

from lab import Scenario, acceptable, actor, forbidden


class BarrierBrokenLocked(Scenario):
    source = "soundness suite: ``Barrier.broken`` read against ``abort()``"
    line_modules = (__name__,)
    outcomes = (
        forbidden("b saw the flag but not the act", b="False"),
        acceptable("b read before the flag, or after the act"),
    )

    def setup(self) -> None:
        self.sent = False
        self.barrier = threading.Barrier(2)
        self.guard = self.lab.lock("guard")

    @actor
    def a(self) -> None:
        with self.guard:
            self.sent = True
            self.barrier.abort()

    @actor
    def b(self) -> str:
        with self.guard:
            if self.sent:
                return f"{self.barrier.broken!r}"
        return "early"
