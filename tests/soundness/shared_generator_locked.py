"""Correct twin of shared_generator: each resumption under one lab lock."""

from collections.abc import Iterator

from lab import Scenario, acceptable, actor, forbidden


class SharedGeneratorLocked(Scenario):
    source = "soundness suite: one generator resumed by two actors"
    line_modules = (__name__,)
    outcomes = (
        forbidden("b resumed the generator while a was inside it", b="ERROR"),
        forbidden("a resumed the generator while b was inside it", a="ERROR"),
        acceptable("each took a number"),
    )

    def setup(self) -> None:
        self.count = 0
        self.numbers = self._numbers()
        self.guard = self.lab.lock("guard")

    def _numbers(self) -> Iterator[int]:
        while True:
            self.count += 1
            taken = self.count
            yield taken

    @actor
    def a(self) -> str:
        with self.guard:
            return str(next(self.numbers))

    @actor
    def b(self) -> str:
        with self.guard:
            return str(self.numbers.__next__())
