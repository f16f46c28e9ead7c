"""Racy: a sets a flag, then stores a key in a shared dict; b, seeing the flag, lists the keys of a
``collections.ChainMap`` over that dict in a loop, before the store.

``ChainMap.__iter__`` is code the lab does not rewrite: each step of the loop may read all the map reaches (the
dict behind it), not only the map.
"""

import collections

from lab import Scenario, acceptable, actor, forbidden


class ChainmapIterate(Scenario):
    source = "soundness suite: a loop over a collections.ChainMap"
    line_modules = (__name__,)
    outcomes = (
        forbidden("b saw the flag but not the key", b="a"),
        acceptable("b read before the flag, or after the store"),
    )

    def setup(self) -> None:
        self.sent = False
        self.base: dict[str, int] = {"a": 0}
        self.view = collections.ChainMap(self.base)

    @actor
    def a(self) -> None:
        self.sent = True
        self.base["k"] = 1

    @actor
    def b(self) -> str:
        if self.sent:
            return ",".join(sorted([key for key in self.view]))
        return "early"
