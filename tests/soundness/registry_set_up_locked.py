"""Correct twin of registry_set_up: each actor checks and appends under one lab lock."""

from lab import Scenario, acceptable, actor, forbidden

REGISTRY: dict[str, list[str]] = {}


class RegistrySetUpLocked(Scenario):
    source = "soundness suite: module state set up afresh each run"
    line_modules = (__name__,)
    outcomes = (
        acceptable("a was first", items=["a"]),
        acceptable("b was first", items=["b"]),
        forbidden("both saw an empty list and appended", items=["a", "b"]),
        forbidden("both saw an empty list and appended", items=["b", "a"]),
    )

    def setup(self) -> None:
        shared: list[str] = []
        REGISTRY["seen by a"] = shared
        REGISTRY["seen by b"] = shared
        self.guard = self.lab.lock("guard")

    @actor
    def a(self) -> None:
        with self.guard:
            items = REGISTRY["seen by a"]
            if not items:
                items.append("a")

    @actor
    def b(self) -> None:
        with self.guard:
            items = REGISTRY["seen by b"]
            if not items:
                items.append("b")

    def observe(self) -> dict[str, list[str]]:
        return {"items": list(REGISTRY["seen by a"])}
