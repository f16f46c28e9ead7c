"""Correct twin of lab_latch_count: a's flag and count-down, and b's check and read, each under one lab lock."""

from lab import Scenario, acceptable, actor, forbidden


class LabLatchCountLocked(Scenario):
    source = "soundness suite: a lab latch's count read against count_down()"
    line_modules = (__name__,)
    outcomes = (
        forbidden("b saw the flag but not the count-down", b="1"),
        acceptable("b read before the flag, or after the count-down"),
    )

    def setup(self) -> None:
        self.sent = False
        self.latch = self.lab.latch("done", 1)
        self.guard = self.lab.lock("guard")

    @actor
    def a(self) -> None:
        with self.guard:
            self.sent = True
            self.latch.count_down()

    @actor
    def b(self) -> str:
        with self.guard:
            if self.sent:
                return f"{self.latch.count!r}"
        return "early"
