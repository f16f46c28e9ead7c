"""Racy: ``setup()`` rebinds a class-level list that two instances share; each actor checks, then appends.

The class outlives runs and the lab reuses its walk of the module while the module holds the same objects; the
class is the same object every run, but what it holds is new, and must be named as the walk would name it."""

from typing import ClassVar

from lab import Scenario, acceptable, actor, forbidden


class _Shelf:
    items: ClassVar[list[str]] = []


class ClassDefaultSetUp(Scenario):
    source = "soundness suite: class state set up afresh each run"
    line_modules = (__name__,)
    outcomes = (
        acceptable("a was first", items=["a"]),
        acceptable("b was first", items=["b"]),
        forbidden("both saw an empty list and appended", items=["a", "b"]),
        forbidden("both saw an empty list and appended", items=["b", "a"]),
    )

    def setup(self) -> None:
        _Shelf.items = []
        self.left, self.right = _Shelf(), _Shelf()

    @actor
    def a(self) -> None:
        items = self.left.items
        if not items:
            items.append("a")

    @actor
    def b(self) -> None:
        items = self.right.items
        if not items:
            items.append("b")

    def observe(self) -> dict[str, list[str]]:
        return {"items": list(_Shelf.items)}
