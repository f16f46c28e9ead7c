"""Correct twin of decorated_method: the two reads, and the store, under one lab lock."""

from collections.abc import Callable
from typing import Any

from lab import Scenario, acceptable, actor, forbidden


def _logged(method: Callable[..., Any]) -> Callable[..., Any]:
    def call(*args: Any) -> Any:
        return method(*args)

    return call


class _Store:
    def __init__(self) -> None:
        self.items = [1]


class _View:
    def __init__(self, store: _Store) -> None:
        self.store = store

    @_logged
    def twice(self) -> bool:
        first = len(self.store.items)
        second = len(self.store.items)
        return first == second


class DecoratedMethodLocked(Scenario):
    source = "soundness suite: a method behind a decorator"
    line_modules = (__name__,)
    outcomes = (
        acceptable("both reads saw one value", same=True),
        forbidden("the reads disagree: the store fell between them", same=False),
    )

    def setup(self) -> None:
        self.store = _Store()
        self.view = _View(self.store)
        self.guard = self.lab.lock("guard")
        self.same = True

    @actor
    def a(self) -> None:
        with self.guard:
            self.same = self.view.twice()

    @actor
    def b(self) -> None:
        with self.guard:
            self.store.items.append(1)

    def observe(self) -> dict[str, bool]:
        return {"same": self.same}
