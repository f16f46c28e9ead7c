"""Racy: a reader reads a stage twice while a writer writes it twice; seeing "half" then "done" takes two preemptions.

The writer moves ``stage`` from "new" to "half" to "done"; the reader reads it twice. The forbidden pair needs the
reader's first read between the two writes and its second read after both: the writer is preempted once and the
reader once. An exploration bounded to one preemption must not call this program correct.
"""

from lab import Scenario, acceptable, actor, forbidden


class TwoPreemptions(Scenario):
    source = "soundness suite: a bug that needs two preemptions"
    line_modules = (__name__,)
    outcomes = (
        forbidden("the reader saw the half-written stage and then the finished one", reader="half>done"),
        acceptable("the reader saw some stage, and then the same or a later one"),
    )

    def setup(self) -> None:
        self.stage = "new"

    @actor
    def writer(self) -> None:
        self.stage = "half"
        self.stage = "done"

    @actor
    def reader(self) -> str:
        first = self.stage
        second = self.stage
        return f"{first}>{second}"
