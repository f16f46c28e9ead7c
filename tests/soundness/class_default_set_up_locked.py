"""Correct twin of class_default_set_up: each actor checks and appends under one lab lock."""

from typing import ClassVar

from lab import Scenario, acceptable, actor, forbidden


class _Shelf:
    items: ClassVar[list[str]] = []


class ClassDefaultSetUpLocked(Scenario):
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
        self.guard = self.lab.lock("guard")

    @actor
    def a(self) -> None:
        with self.guard:
            items = self.left.items
            if not items:
                items.append("a")

    @actor
    def b(self) -> None:
        with self.guard:
            items = self.right.items
            if not items:
                items.append("b")

    def observe(self) -> dict[str, list[str]]:
        return {"items": list(_Shelf.items)}
