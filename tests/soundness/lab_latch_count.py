"""Racy: a sets a flag, then counts a lab latch down; b, seeing the flag, reads the latch's ``count`` before the
count-down.

A lab primitive's every attribute is its state too: reading ``count`` reads every actor's count-downs.
"""

from lab import Scenario, acceptable, actor, forbidden


class LabLatchCount(Scenario):
    source = "soundness suite: a lab latch's count read against count_down()"
    line_modules = (__name__,)
    outcomes = (
        forbidden("b saw the flag but not the count-down", b="1"),
        acceptable("b read before the flag, or after the count-down"),
    )

    def setup(self) -> None:
        self.sent = False
        self.latch = self.lab.latch("done", 1)

    @actor
    def a(self) -> None:
        self.sent = True
        self.latch.count_down()

    @actor
    def b(self) -> str:
        if self.sent:
            return f"{self.latch.count!r}"
        return "early"
