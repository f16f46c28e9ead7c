"""Racy: a drops the last reference to a cached thing while b looks it up in a WeakValueDictionary by index.

The entry vanishes the moment a drops the thing, so b's ``cache["k"]`` raises KeyError in every real run where a
goes first. Anything of the lab's that kept the thing alive would hide that.
"""

import weakref

from lab import Scenario, acceptable, actor, forbidden


class Thing:
    """Something a weak cache can point to."""


class WeakCache(Scenario):
    source = "soundness suite: a weak cache"
    line_modules = (__name__,)
    outcomes = (
        acceptable("b found the thing before a dropped it", found="yes"),
        forbidden("b's lookup raised: the entry had vanished", found="KeyError"),
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
        try:
            self.cache["k"]
        except KeyError:
            self.found = "KeyError"
        else:
            self.found = "yes"

    def observe(self) -> dict[str, str]:
        return {"found": self.found}
