"""Correct twin of class_attribute: the class attribute is read and written under one lab lock."""

from lab import Scenario, acceptable, actor, forbidden


class _Counter:
    total = 0


class ClassAttributeLocked(Scenario):
    source = "soundness suite: a class attribute"
    line_modules = (__name__,)
    outcomes = (
        acceptable("both increments landed", total=2),
        forbidden("an increment was lost: both read 0", total=1),
    )

    def setup(self) -> None:
        _Counter.total = 0
        self.guard = self.lab.lock("guard")

    @actor
    def a(self) -> None:
        with self.guard:
            n = _Counter.total
            _Counter.total = n + 1

    @actor
    def b(self) -> None:
        with self.guard:
            n = _Counter.total
            _Counter.total = n + 1

    def observe(self) -> dict[str, int]:
        return {"total": _Counter.total}
