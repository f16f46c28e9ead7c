"""Racy: reading a missing key of a defaultdict subclass inserts it; the other actor counts the keys first or not.

``d[k]`` on a mapping with ``__missing__`` is a write when the key is missing (C code inserts it), whatever class
the mapping is: a subclass of defaultdict is still one."""

from collections import defaultdict

from lab import Scenario, acceptable, actor, forbidden


class _Groups(defaultdict[str, list[str]]):
    """A defaultdict of the program's own: its lookups insert missing keys, as defaultdict's do."""


class MissingKeySubclass(Scenario):
    source = "soundness suite: a defaultdict subclass"
    line_modules = (__name__,)
    outcomes = (
        acceptable("counted after the lookup inserted the key", keys=1),
        forbidden("counted before the lookup", keys=0),
    )

    def setup(self) -> None:
        self.groups = _Groups(list)
        self.keys = -1

    @actor
    def a(self) -> None:
        self.groups["x"]

    @actor
    def b(self) -> None:
        self.keys = len(self.groups)

    def observe(self) -> dict[str, int]:
        return {"keys": self.keys}
