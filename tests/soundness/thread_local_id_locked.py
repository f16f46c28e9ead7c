"""Correct twin of thread_local_id: the cache, the counter and the list of ids taken used under one threading.Lock."""

import threading

from lab import Scenario, acceptable, actor, forbidden

_MINE = threading.local()


class ThreadLocalIdLocked(Scenario):
    source = "soundness suite: a thread-local cache"
    line_modules = (__name__,)
    outcomes = (
        acceptable("two distinct ids", ids=[0, 1]),
        forbidden("both took id 0", ids=[0, 0]),
    )

    def setup(self) -> None:
        self.next = 0
        self.taken: list[int] = []
        self.guard = threading.Lock()

    def _take(self) -> None:
        with self.guard:
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
