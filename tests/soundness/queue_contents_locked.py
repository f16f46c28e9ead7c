"""Correct twin of queue_contents: a's flag and act, and b's check and read, each under one lab lock."""

import queue

from lab import Scenario, acceptable, actor, forbidden


class QueueContentsLocked(Scenario):
    source = "soundness suite: ``len(Queue.queue)`` read against ``put()``"
    line_modules = (__name__,)
    outcomes = (
        forbidden("b saw the flag but not the act", b="0"),
        acceptable("b read before the flag, or after the act"),
    )

    def setup(self) -> None:
        self.sent = False
        self.queue: queue.Queue[int] = queue.Queue()
        self.guard = self.lab.lock("guard")

    @actor
    def a(self) -> None:
        with self.guard:
            self.sent = True
            self.queue.put(1)

    @actor
    def b(self) -> str:
        with self.guard:
            if self.sent:
                return f"{len(self.queue.queue)!r}"
        return "early"
