"""Racy: each actor takes an id from a shared counter unless a ContextVar holds one; two take the same.

A new thread starts in a context of its own, where the variable is unset: both read the counter, and both can
read 0. A context kept from the execution before would hand back last run's id and skip the counter.
"""

import contextvars

from lab import Scenario, acceptable, actor, forbidden

_TOKEN: contextvars.ContextVar[int | None] = contextvars.ContextVar("_TOKEN", default=None)


class ContextVarId(Scenario):
    source = "soundness suite: a ContextVar cache"
    line_modules = (__name__,)
    outcomes = (
        acceptable("two distinct ids", ids=[0, 1]),
        forbidden("both took id 0", ids=[0, 0]),
    )

    def setup(self) -> None:
        self.next = 0
        self.taken: list[int] = []

    def _take(self) -> None:
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
