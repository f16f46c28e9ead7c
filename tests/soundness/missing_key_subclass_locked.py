"""Correct twin of missing_key_subclass: the count runs after the lookup (the actors hand over through a latch)."""

from collections import defaultdict

from lab import Scenario, acceptable, actor, forbidden


class _Groups(defaultdict[str, list[str]]):
    """A defaultdict of the program's own: its lookups insert missing keys, as defaultdict's do."""


class MissingKeySubclassLocked(Scenario):
    source = "soundness suite: a defaultdict subclass"
    line_modules = (__name__,)
    outcomes = (
        acceptable("counted after the lookup inserted the key", keys=1),
        forbidden("counted before the lookup", keys=0),
    )

    def setup(self) -> None:
        self.groups = _Groups(list)
        self.keys = -1
        self.looked_up = self.lab.latch("looked up")

    @actor
    def a(self) -> None:
        self.groups["x"]
        self.looked_up.count_down()

    @actor
    def b(self) -> None:
        self.looked_up.wait()
        self.keys = len(self.groups)

    def observe(self) -> dict[str, int]:
        return {"keys": self.keys}
