"""Correct twin of weak_entry_dropped: b looks only after a has dropped the object (an event orders them)."""

import threading
import weakref

from lab import Scenario, acceptable, actor, forbidden


class Session:
    pass


class WeakEntryDroppedAfter(Scenario):
    source = "soundness suite: a weak entry looked up after the drop of its object"
    line_modules = (__name__,)
    outcomes = (
        acceptable("the session was gone when b looked", b="False"),
        forbidden("b found a dropped session", b="True"),
    )

    def setup(self) -> None:
        self.cache: weakref.WeakValueDictionary[str, Session] = weakref.WeakValueDictionary()
        self.open = [Session()]
        self.cache["s1"] = self.open[0]
        self.dropped = threading.Event()

    @actor
    def a(self) -> None:
        self.open.clear()
        self.dropped.set()

    @actor
    def b(self) -> str:
        self.dropped.wait()
        return str("s1" in self.cache)
