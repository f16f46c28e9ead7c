"""Racy: a drops the last reference to a WeakSet's member while b counts the members with len()."""

import weakref

from lab import Scenario, acceptable, actor, forbidden


class Listener:
    pass


class WeakSetMember(Scenario):
    source = "soundness suite: a weak set's size against the drop of a member"
    line_modules = (__name__,)
    outcomes = (
        acceptable("b counted the listener before a dropped it", b="1"),
        forbidden("the listener was gone when b counted", b="0"),
    )

    def setup(self) -> None:
        self.held = [Listener()]
        self.listeners: weakref.WeakSet[Listener] = weakref.WeakSet(self.held)

    @actor
    def a(self) -> None:
        del self.held[0]

    @actor
    def b(self) -> str:
        return str(len(self.listeners))
