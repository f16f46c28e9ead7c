"""Correct twin of quiet_generator: each actor resumes the generator under one lab lock."""

from collections.abc import Iterator

from lab import Scenario, acceptable, actor, forbidden


def _counting() -> Iterator[int]:
    yield from range(10)


class QuietGeneratorLocked(Scenario):
    source = "soundness suite: a generator with no access of its own, resumed under a lock"
    line_modules = (__name__,)
    outcomes = (
        forbidden("b resumed the generator while a was inside it", b="busy"),
        forbidden("a resumed the generator while b was inside it", a="busy"),
        acceptable("each took a number"),
    )

    def setup(self) -> None:
        self.numbers = _counting()
        self.guard = self.lab.lock("guard")

    @actor
    def a(self) -> str:
        with self.guard:
            try:
                return str(next(self.numbers))
            except ValueError:
                return "busy"

    @actor
    def b(self) -> str:
        with self.guard:
            try:
                return str(next(self.numbers))
            except ValueError:
                return "busy"
