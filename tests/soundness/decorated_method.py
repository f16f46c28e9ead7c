"""Racy: one actor counts a store's items twice in a method wrapped by a decorator that does not use
``functools.wraps``, while the other adds an item.

The class holds only the wrapper; the method's own body, two reads on two lines, lives in the wrapper's closure.
"""

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


class DecoratedMethod(Scenario):
    source = "soundness suite: a method behind a decorator"
    line_modules = (__name__,)
    outcomes = (
        acceptable("both reads saw one value", same=True),
        forbidden("the reads disagree: the store fell between them", same=False),
    )

    def setup(self) -> None:
        self.store = _Store()
        self.view = _View(self.store)
        self.same = True

    @actor
    def a(self) -> None:
        self.same = self.view.twice()

    @actor
    def b(self) -> None:
        self.store.items.append(1)

    def observe(self) -> dict[str, bool]:
        return {"same": self.same}
