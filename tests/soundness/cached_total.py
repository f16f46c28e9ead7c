"""Racy: one actor reads a ``functools.cached_property`` while the other adds an item and drops the cached total.

The getter sums the items, then counts the sum on the next line: an add and a drop between the two leave a stale
total cached. The getter runs inside ``cached_property.__get__`` (the standard library's code), which stores the
total.
"""

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


class CachedTotal(Scenario):
    source = "soundness suite: a functools.cached_property"
    line_modules = (__name__,)
    outcomes = (
        acceptable("the cached total, if any, is the sum of the items", stale=False),
        forbidden("a total computed before the add was cached after the drop", stale=True),
    )

    def setup(self) -> None:
        self.cart = _Cart()

    @actor
    def a(self) -> None:
        self.cart.items.append(1)
        vars(self.cart).pop("total", None)

    @actor
    def b(self) -> None:
        self.seen = self.cart.total

    def observe(self) -> dict[str, bool]:
        cached = vars(self.cart).get("total")
        return {"stale": cached is not None and cached != sum(self.cart.items)}
