"""Racy: a sets a flag, then stores a key in a shared dict; b, seeing the flag, takes ``len`` of a
``collections.ChainMap`` over that dict, before the store.

``len`` runs ``ChainMap.__len__``, code the lab does not rewrite: the call reads all the map reaches (the dict
behind it), not only the map.
"""

import collections

from lab import Scenario, acceptable, actor, forbidden


class ChainmapLen(Scenario):
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

    @actor
    def a(self) -> None:
        self.sent = True
        self.base["k"] = 1

    @actor
    def b(self) -> str:
        if self.sent:
            return str(len(self.view))
        return "early"
