"""Correct twin of barrier_waiting: b reads ``Barrier.n_waiting`` only once both passed the barrier, when no wait can
change it (the barrier drains or is filling again, and either way says 0).
"""

import threading

from lab import Scenario, acceptable, actor, forbidden


class BarrierWaitingAfter(Scenario):
    source = "soundness suite: Barrier.n_waiting read against wait()"
    line_modules = (__name__,)
    outcomes = (
        forbidden("b saw a party still waiting after both passed", b="1"),
        acceptable("b saw no one waiting"),
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
        self.barrier.wait()
        return f"{self.barrier.n_waiting!r}"
