"""Racy: a builds a list of ``map`` over a shared list with a method under test; b pops the head meanwhile.

``list`` runs the map in C, which reads the list between calls of the method, and the method's own lines are
scheduling points: the pop can fall between two of the C code's reads, inside one call of ``list``.
"""

from lab import Scenario, acceptable, actor, forbidden


class MapCallback(Scenario):
    source = "soundness suite: map of code under test over a shared list, consumed by list()"
    line_modules = (__name__,)
    outcomes = (
        acceptable("b popped first", got="20,30"),
        acceptable("a mapped first", got="10,20,30"),
        forbidden("b popped after the first item: one skipped", got="10,30"),
        forbidden("b popped after the second item: the last one lost", got="10,20"),
    )

    def setup(self) -> None:
        self.items = [1, 2, 3]
        self.got = ""
        self.factor = 10

    def _scale(self, x: int) -> str:
        scaled = x * self.factor  # a read of shared state: a scheduling point at every granularity but probe
        return str(scaled)

    @actor
    def a(self) -> None:
        got = list(map(self._scale, self.items))
        self.got = ",".join(got)

    @actor
    def b(self) -> None:
        self.items.pop(0)

    def observe(self) -> dict[str, str]:
        return {"got": self.got}
