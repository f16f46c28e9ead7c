"""Correct twin of weak_set_member: a drops a second reference only; the member stays alive."""

import weakref

from lab import Scenario, acceptable, actor, forbidden


class Listener:
    pass


class WeakSetMemberKept(Scenario):
    source = "soundness suite: a weak set's size while a member stays referenced"
    line_modules = (__name__,)
    outcomes = (
        acceptable("b counted the listener", b="1"),
        forbidden("the listener was gone when b counted", b="0"),
    )

    def setup(self) -> None:
        listener = Listener()
        self.held = [listener]
        self.owner = listener
        self.listeners: weakref.WeakSet[Listener] = weakref.WeakSet(self.held)

    @actor
    def a(self) -> None:
        del self.held[0]

    @actor
    def b(self) -> str:
        return str(len(self.listeners))
