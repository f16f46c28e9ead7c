"""Racy: a sleeps, then writes; b reads. A sleep orders nothing: real threads run the write first as often as not.

``time.sleep(0.01); self.x = 1`` against ``self.seen = self.x``: a sleep is a scheduling point, not a promise that
the others go first (a loaded machine wakes the sleeper before b's thread is ever scheduled).
"""

import time

from lab import Scenario, acceptable, actor, forbidden


class SleepThenWrite(Scenario):
    source = "soundness suite: a sleep before the raced step"
    line_modules = (__name__,)
    outcomes = (
        acceptable("b read before a wrote", seen=0),
        forbidden("a woke and wrote before b read", seen=1),
    )

    def setup(self) -> None:
        self.x = 0
        self.seen = -1

    @actor
    def a(self) -> None:
        time.sleep(0.01)
        self.x = 1

    @actor
    def b(self) -> None:
        self.seen = self.x

    def observe(self) -> dict[str, int]:
        return {"seen": self.seen}
