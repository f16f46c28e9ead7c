"""Correct twin of chainmap_write: a's flag and act, and b's check and read, each under one lab lock."""

import collections

from lab import Scenario, acceptable, actor, forbidden


class ChainmapWriteLocked(Scenario):
    source = "soundness suite: a store through a ``collections.ChainMap`` over a shared dict"
    line_modules = (__name__,)
    outcomes = (
        forbidden("b saw the flag but not the act", b="0"),
        acceptable("b read before the flag, or after the act"),
    )

    def setup(self) -> None:
        self.sent = False
        self.base: dict[str, int] = {}
        self.view = collections.ChainMap(self.base)
        self.guard = self.lab.lock("guard")

    @actor
    def a(self) -> None:
        with self.guard:
            self.sent = True
            self.view["k"] = 1

    @actor
    def b(self) -> str:
        with self.guard:
            if self.sent:
                return f"{self.base.get('k', 0)!r}"
        return "early"
