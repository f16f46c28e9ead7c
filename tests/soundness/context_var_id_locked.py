"""Correct twin of context_var_id: the cache, the counter and the list of ids taken used under one threading.Lock."""

import contextvars
import threading

from lab import Scenario, acceptable, actor, forbidden

_TOKEN: contextvars.ContextVar[int | None] = contextvars.ContextVar("_TOKEN", default=None)


class ContextVarIdLocked(Scenario):
    source = "soundness suite: a ContextVar cache"
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
            mine = _TOKEN.get()
            if mine is None:
                n = self.next
                self.next = n + 1
                _TOKEN.set(n)
                mine = n
            self.taken.append(mine)

    @actor
    def a(self) -> None:
        self._take()

    @actor
    def b(self) -> None:
        self._take()

    def observe(self) -> dict[str, list[int]]:
        return {"ids": sorted(self.taken)}
