"""Racy: a sets a flag, then waits at a two-party barrier; b, seeing the flag, reads ``Barrier.n_waiting`` before a
arrives, then waits too.

A stand-in primitive's every attribute is its state: reading ``n_waiting`` must conflict with ``wait()``.
"""

import threading

from lab import Scenario, acceptable, actor, forbidden


class BarrierWaiting(Scenario):
    source = "soundness suite: Barrier.n_waiting read against wait()"
    line_modules = (__name__,)
    outcomes = (
        forbidden("b saw the flag but not a waiting", b="0"),
        acceptable("b read before the flag, or once a waited"),
    )

    def setup(self) -> None:
        self.sent = False
        self.barrier = threading.Barrier(2)

    @actor
    def a(self) -> None:
        self.sent = True
        self.barrier.wait()

    @actor
    def b(self) -> str:
        seen = f"{self.barrier.n_waiting!r}" if self.sent else "early"
        self.barrier.wait()
        return seen
