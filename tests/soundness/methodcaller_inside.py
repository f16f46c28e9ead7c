"""Racy: a sets a flag, then appends through ``operator.methodcaller("append", 1)`` made in the actor; b, seeing
the flag, reads the list before the append.

Calling the methodcaller is a call into code the lab does not rewrite: it writes what it is handed and what it holds.
"""

import operator

from lab import Scenario, acceptable, actor, forbidden


class MethodcallerInside(Scenario):
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

    @actor
    def a(self) -> None:
        self.sent = True
        operator.methodcaller("append", 1)(self.items)

    @actor
    def b(self) -> str:
        if self.sent:
            return f"{len(self.items)!r}"
        return "early"
