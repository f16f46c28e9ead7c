"""Correct twin of semaphore_value: a's flag and act, and b's check and read, each under one lab lock."""

import threading

from lab import Scenario, acceptable, actor, forbidden


class SemaphoreValueLocked(Scenario):
    source = "soundness suite: ``Semaphore._value`` read against ``release()``"
    line_modules = (__name__,)
    outcomes = (
        forbidden("b saw the flag but not the act", b="0"),
        acceptable("b read before the flag, or after the act"),
    )

    def setup(self) -> None:
        self.sent = False
        self.semaphore = threading.Semaphore(0)
        self.guard = self.lab.lock("guard")

    @actor
    def a(self) -> None:
        with self.guard:
            self.sent = True
            self.semaphore.release()

    @actor
    def b(self) -> str:
        with self.guard:
            if self.sent:
                return f"{self.semaphore._value!r}"
        return "early"
