"""Correct twin of weak_cache: b looks the thing up with get() and the cache is empty once both are done."""

import weakref

from lab import Scenario, acceptable, actor, forbidden


class Thing:
    """Something a weak cache can point to."""


class WeakCacheChecked(Scenario):
    source = "soundness suite: a weak cache"
    line_modules = (__name__,)
    outcomes = (
        acceptable("b found the thing before a dropped it", found="yes", left=0),
        acceptable("b found the entry gone", found="no", left=0),
        forbidden("something kept the thing alive", found="yes", left=1),
        forbidden("something kept the thing alive", found="no", left=1),
    )

    def setup(self) -> None:
        self.cache: weakref.WeakValueDictionary[str, Thing] = weakref.WeakValueDictionary()
        self.holder: Thing | None = Thing()
        self.cache["k"] = self.holder
        self.found = "not yet"

    @actor
    def a(self) -> None:
        self.holder = None

    @actor
    def b(self) -> None:
        self.found = "no" if self.cache.get("k") is None else "yes"

    def observe(self) -> dict[str, object]:
        return {"found": self.found, "left": len(self.cache)}
