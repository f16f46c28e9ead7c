"""Racy: a sets a flag, then aborts a barrier; b, seeing the flag, reads ``Barrier.broken`` before the abort.

A stand-in primitive's every attribute is its state: reading ``broken`` must conflict with ``abort()``.
"""

import threading

from lab import Scenario, acceptable, actor, forbidden


class BarrierBroken(Scenario):
    source = "soundness suite: ``Barrier.broken`` read against ``abort()``"
    line_modules = (__name__,)
    outcomes = (
        forbidden("b saw the flag but not the act", b="False"),
        acceptable("b read before the flag, or after the act"),
    )

    def setup(self) -> None:
        self.sent = False
        self.barrier = threading.Barrier(2)

    @actor
    def a(self) -> None:
        self.sent = True
        self.barrier.abort()

    @actor
    def b(self) -> str:
        if self.sent:
            return f"{self.barrier.broken!r}"
        return "early"
