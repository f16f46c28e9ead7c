"""Racy: a sets a flag, then stores a key through a ``collections.ChainMap`` over a shared dict; b, seeing the
flag, reads the dict before the store.

``ChainMap.__setitem__`` is code the lab does not rewrite: the store writes everything the map reaches.
"""

import collections

from lab import Scenario, acceptable, actor, forbidden


class ChainmapWrite(Scenario):
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

    @actor
    def a(self) -> None:
        self.sent = True
        self.view["k"] = 1

    @actor
    def b(self) -> str:
        if self.sent:
            return f"{self.base.get('k', 0)!r}"
        return "early"
