"""Racy: a sets a flag, then registers an implementation with a ``functools.singledispatch`` function; b, seeing
the flag, dispatches before the registration.

The registry lives in the closures of functools' code: a call of it writes everything its closure reaches.
"""

import functools

from lab import Scenario, acceptable, actor, forbidden


def _plain(x: object) -> str:
    return "plain"


def _number(x: int) -> str:
    return "number"


class SingledispatchRegistry(Scenario):
    source = "soundness suite: a ``functools.singledispatch`` registry registered by a and dispatched by b"
    line_modules = (__name__,)
    outcomes = (
        forbidden("b saw the flag but not the act", b="'plain'"),
        acceptable("b read before the flag, or after the act"),
    )

    def setup(self) -> None:
        self.sent = False
        self.describe = functools.singledispatch(_plain)

    @actor
    def a(self) -> None:
        self.sent = True
        self.describe.register(int, _number)

    @actor
    def b(self) -> str:
        if self.sent:
            return f"{self.describe(1)!r}"
        return "early"
