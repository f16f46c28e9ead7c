"""Correct twin of cached_total: the add and the drop, and the read of the cached total, under one lab lock."""

import functools

from lab import Scenario, acceptable, actor, forbidden


class _Cart:
    def __init__(self) -> None:
        self.items = [1]
        self.sums = 0

    @functools.cached_property
    def total(self) -> int:
        n = sum(self.items)
        self.sums += 1
        return n


class CachedTotalLocked(Scenario):
    source = "soundness suite: a functools.cached_property"
    line_modules = (__name__,)
    outcomes = (
        acceptable("the cached total, if any, is the sum of the items", stale=False),
        forbidden("a total computed before the add was cached after the drop", stale=True),
    )

    def setup(self) -> None:
        self.cart = _Cart()
        self.guard = self.lab.lock("guard")

    @actor
    def a(self) -> None:
        with self.guard:
            self.cart.items.append(1)
            vars(self.cart).pop("total", None)

    @actor
    def b(self) -> None:
        with self.guard:
            self.seen = self.cart.total

    def observe(self) -> dict[str, bool]:
        cached = vars(self.cart).get("total")
        return {"stale": cached is not None and cached != sum(self.cart.items)}
