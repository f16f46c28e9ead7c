"""Racy: a sets a flag, then releases a semaphore; b, seeing the flag, reads ``Semaphore._value`` before it.

A stand-in primitive's every attribute is its state: reading ``_value`` must conflict with ``release()``.
"""

import threading

from lab import Scenario, acceptable, actor, forbidden


class SemaphoreValue(Scenario):
    source = "soundness suite: ``Semaphore._value`` read against ``release()``"
    line_modules = (__name__,)
    outcomes = (
        forbidden("b saw the flag but not the act", b="0"),
        acceptable("b read before the flag, or after the act"),
    )

    def setup(self) -> None:
        self.sent = False
        self.semaphore = threading.Semaphore(0)

    @actor
    def a(self) -> None:
        self.sent = True
        self.semaphore.release()

    @actor
    def b(self) -> str:
        if self.sent:
            return f"{self.semaphore._value!r}"
        return "early"
