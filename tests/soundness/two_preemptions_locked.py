"""Correct twin of two_preemptions: the writer writes both stages, and the reader reads twice, under one lab lock."""

from lab import Scenario, acceptable, actor, forbidden


class TwoPreemptionsLocked(Scenario):
    source = "soundness suite: a bug that needs two preemptions"
    line_modules = (__name__,)
    outcomes = (
        forbidden("the reader saw the half-written stage and then the finished one", reader="half>done"),
        acceptable("the reader saw some stage, and then the same or a later one"),
    )

    def setup(self) -> None:
        self.stage = "new"
        self.guard = self.lab.lock("guard")

    @actor
    def writer(self) -> None:
        with self.guard:
            self.stage = "half"
            self.stage = "done"

    @actor
    def reader(self) -> str:
        with self.guard:
            first = self.stage
            second = self.stage
        return f"{first}>{second}"
