"""Correct twin of chainmap_len: a's flag and store, and b's check and loop, each under one lab lock."""

import collections

from lab import Scenario, acceptable, actor, forbidden


class ChainmapLenLocked(Scenario):
    source = "soundness suite: len() of a collections.ChainMap"
    line_modules = (__name__,)
    outcomes = (
        forbidden("b saw the flag but not the key", b="1"),
        acceptable("b read before the flag, or after the store"),
    )

    def setup(self) -> None:
        self.sent = False
        self.base: dict[str, int] = {"a": 0}
        self.view = collections.ChainMap(self.base)
        self.guard = self.lab.lock("guard")

    @actor
    def a(self) -> None:
        with self.guard:
            self.sent = True
            self.base["k"] = 1

    @actor
    def b(self) -> str:
        with self.guard:
            if self.sent:
                return str(len(self.view))
        return "early"
