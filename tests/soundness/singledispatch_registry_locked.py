"""Correct twin of singledispatch_registry: a's flag and act, and b's check and read, each under one lab lock."""

import functools

from lab import Scenario, acceptable, actor, forbidden


def _plain(x: object) -> str:
    return "plain"


def _number(x: int) -> str:
    return "number"


class SingledispatchRegistryLocked(Scenario):
    source = "soundness suite: a ``functools.singledispatch`` registry registered by a and dispatched by b"
    line_modules = (__name__,)
    outcomes = (
        forbidden("b saw the flag but not the act", b="'plain'"),
        acceptable("b read before the flag, or after the act"),
    )

    def setup(self) -> None:
        self.sent = False
        self.describe = functools.singledispatch(_plain)
        self.guard = self.lab.lock("guard")

    @actor
    def a(self) -> None:
        with self.guard:
            self.sent = True
            self.describe.register(int, _number)

    @actor
    def b(self) -> str:
        with self.guard:
            if self.sent:
                return f"{self.describe(1)!r}"
        return "early"
