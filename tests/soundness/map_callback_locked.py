"""Correct twin of map_callback: the map and the pop run under one lab lock."""

from lab import Scenario, acceptable, actor, forbidden


class MapCallbackLocked(Scenario):
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
        self.guard = self.lab.lock("guard")

    def _scale(self, x: int) -> str:
        scaled = x * self.factor  # a read of shared state: a scheduling point at every granularity but probe
        return str(scaled)

    @actor
    def a(self) -> None:
        with self.guard:
            got = list(map(self._scale, self.items))
        self.got = ",".join(got)

    @actor
    def b(self) -> None:
        with self.guard:
            self.items.pop(0)

    def observe(self) -> dict[str, str]:
        return {"got": self.got}
