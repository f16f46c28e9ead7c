"""Racy: each actor takes an id from a shared counter unless its thread-local cache holds one; two take the same.

Every actor is a new thread, so its cache is empty and both read the counter: the read and the write are on two
lines, and both can read 0. A pooled thread that kept the cache of the execution before would skip the counter.
"""

import threading

from lab import Scenario, acceptable, actor, forbidden

_MINE = threading.local()


class ThreadLocalId(Scenario):
    source = "soundness suite: a thread-local cache"
    line_modules = (__name__,)
    outcomes = (
        acceptable("two distinct ids", ids=[0, 1]),
        forbidden("both took id 0", ids=[0, 0]),
    )

    def setup(self) -> None:
        self.next = 0
        self.taken: list[int] = []

    def _take(self) -> None:
        mine = getattr(_MINE, "id", None)
        if mine is None:
            n = self.next
            self.next = n + 1
            _MINE.id = mine = n
        self.taken.append(mine)

    @actor
    def a(self) -> None:
        self._take()

    @actor
    def b(self) -> None:
        self._take()

    def observe(self) -> dict[str, list[int]]:
        return {"ids": sorted(self.taken)}
