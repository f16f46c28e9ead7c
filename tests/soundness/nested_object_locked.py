"""Correct twin of nested_object: ``self.store.version`` is read and written under one lab lock."""

from lab import Scenario, acceptable, actor, forbidden


class _Store:
    def __init__(self) -> None:
        self.version = 0


class NestedObjectLocked(Scenario):
    source = "soundness suite: a nested object (self.store.version)"
    line_modules = (__name__,)
    outcomes = (
        acceptable("both bumps landed", version=2),
        forbidden("a bump was lost: both read version 0", version=1),
    )

    def setup(self) -> None:
        self.store = _Store()
        self.guard = self.lab.lock("guard")

    @actor
    def a(self) -> None:
        with self.guard:
            v = self.store.version
            self.store.version = v + 1

    @actor
    def b(self) -> None:
        with self.guard:
            v = self.store.version
            self.store.version = v + 1

    def observe(self) -> dict[str, int]:
        return {"version": self.store.version}
