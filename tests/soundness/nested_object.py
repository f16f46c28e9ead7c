"""Racy: two actors bump ``self.store.version``, reading it on one line and writing it on the next.

The version is an attribute of an object held in an attribute: ``self.store`` is only read, ``version`` is written.
"""

from lab import Scenario, acceptable, actor, forbidden


class _Store:
    def __init__(self) -> None:
        self.version = 0


class NestedObject(Scenario):
    source = "soundness suite: a nested object (self.store.version)"
    line_modules = (__name__,)
    outcomes = (
        acceptable("both bumps landed", version=2),
        forbidden("a bump was lost: both read version 0", version=1),
    )

    def setup(self) -> None:
        self.store = _Store()

    @actor
    def a(self) -> None:
        v = self.store.version
        self.store.version = v + 1

    @actor
    def b(self) -> None:
        v = self.store.version
        self.store.version = v + 1

    def observe(self) -> dict[str, int]:
        return {"version": self.store.version}
