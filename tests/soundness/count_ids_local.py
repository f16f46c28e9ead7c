"""Correct twin of count_ids: each actor keeps the id next() gave it to itself; one count hands out distinct ids."""

import itertools

from lab import Scenario, acceptable, actor, forbidden


class CountIdsLocal(Scenario):
    source = "soundness suite: itertools.count"
    line_modules = (__name__,)
    outcomes = (
        acceptable("two distinct ids", ids=[0, 1]),
        forbidden("both used id 0", ids=[0, 0]),
        forbidden("both used id 1", ids=[1, 1]),
    )

    def setup(self) -> None:
        self.ids = itertools.count()
        self.a_id = self.b_id = -1

    @actor
    def a(self) -> None:
        self.a_id = next(self.ids)

    @actor
    def b(self) -> None:
        self.b_id = next(self.ids)

    def observe(self) -> dict[str, list[int]]:
        return {"ids": sorted([self.a_id, self.b_id])}
