"""Correct twin of methodcaller_inside: a's flag and act, and b's check and read, each under one lab lock."""

import operator

from lab import Scenario, acceptable, actor, forbidden


class MethodcallerInsideLocked(Scenario):
    source = (
        "soundness suite: ``operator.methodcaller('append', 1)`` made inside the actor and applied to a shared list"
    )
    line_modules = (__name__,)
    outcomes = (
        forbidden("b saw the flag but not the act", b="0"),
        acceptable("b read before the flag, or after the act"),
    )

    def setup(self) -> None:
        self.sent = False
        self.items: list[int] = []
        self.guard = self.lab.lock("guard")

    @actor
    def a(self) -> None:
        with self.guard:
            self.sent = True
            operator.methodcaller("append", 1)(self.items)

    @actor
    def b(self) -> str:
        with self.guard:
            if self.sent:
                return f"{len(self.items)!r}"
        return "early"
