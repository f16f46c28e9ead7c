"""Racy: a sets a flag, then puts an item; b, seeing the flag, reads ``Queue.unfinished_tasks`` before the put.

A stand-in primitive's every attribute is its state: reading ``unfinished_tasks`` must conflict with ``put()``.
"""

import queue

from lab import Scenario, acceptable, actor, forbidden


class QueueUnfinished(Scenario):
    source = "soundness suite: ``Queue.unfinished_tasks`` read against ``put()``"
    line_modules = (__name__,)
    outcomes = (
        forbidden("b saw the flag but not the act", b="0"),
        acceptable("b read before the flag, or after the act"),
    )

    def setup(self) -> None:
        self.sent = False
        self.queue: queue.Queue[int] = queue.Queue()

    @actor
    def a(self) -> None:
        self.sent = True
        self.queue.put(1)

    @actor
    def b(self) -> str:
        if self.sent:
            return f"{self.queue.unfinished_tasks!r}"
        return "early"
