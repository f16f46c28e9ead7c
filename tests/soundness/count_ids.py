"""Racy: ids come from one itertools.count, but each actor parks its id in a shared slot before using it.

``next()`` on a count is one atomic C call, so the ids are distinct; the slot they pass through is not: a writes
it, b overwrites it, a reads b's id back, and both use the same one.
"""

import itertools

from lab import Scenario, acceptable, actor, forbidden


class CountIds(Scenario):
    source = "soundness suite: itertools.count"
    line_modules = (__name__,)
    outcomes = (
        acceptable("two distinct ids", ids=[0, 1]),
        forbidden("both used id 0", ids=[0, 0]),
        forbidden("both used id 1", ids=[1, 1]),
    )

    def setup(self) -> None:
        self.ids = itertools.count()
        self.slot = -1
        self.used: list[int] = []

    def _take(self) -> None:
        self.slot = next(self.ids)
        self.used.append(self.slot)

    @actor
    def a(self) -> None:
        self._take()

    @actor
    def b(self) -> None:
        self._take()

    def observe(self) -> dict[str, list[int]]:
        return {"ids": sorted(self.used)}
