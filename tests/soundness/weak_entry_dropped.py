"""Racy: a drops the last reference to a cached object while b looks it up in a WeakValueDictionary.

Whether b finds the entry depends on the order alone, but the footprints of the two steps share nothing the
program names: a writes a list, b reads the weak dictionary. The object's death, which empties the entry, is what
b reads: the recorder writes the state of weak references in the step that drops the last reference.
"""

import weakref

from lab import Scenario, acceptable, actor, forbidden


class Session:
    pass


class WeakEntryDropped(Scenario):
    source = "soundness suite: a weak entry against the drop of its object"
    line_modules = (__name__,)
    outcomes = (
        acceptable("b found the session before a dropped it", b="True"),
        forbidden("the session was gone when b looked", b="False"),
    )

    def setup(self) -> None:
        self.cache: weakref.WeakValueDictionary[str, Session] = weakref.WeakValueDictionary()
        self.open = [Session()]
        self.cache["s1"] = self.open[0]

    @actor
    def a(self) -> None:
        self.open.clear()

    @actor
    def b(self) -> str:
        return str("s1" in self.cache)
