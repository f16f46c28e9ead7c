"""Correct twin of generator_send_throw: each resumption under one lab lock."""

from collections.abc import Generator

from lab import Scenario, acceptable, actor, forbidden


class GeneratorSendThrowLocked(Scenario):
    source = "soundness suite: one generator resumed by send and throw"
    line_modules = (__name__,)
    outcomes = (
        forbidden("b resumed the generator while a was inside it", b="ERROR"),
        forbidden("a resumed the generator while b was inside it", a="ERROR"),
        acceptable("each resumed it in turn"),
    )

    def setup(self) -> None:
        self.count = 0
        self.skipped = 0
        self.numbers = self._numbers()
        next(self.numbers)
        self.guard = self.lab.lock("guard")

    def _numbers(self) -> Generator[int, int, None]:
        while True:
            try:
                yield self.count
            except KeyError:
                self.skipped += 1
            self.count += 1
            self.count += 1

    @actor
    def a(self) -> str:
        with self.guard:
            return str(self.numbers.send(1))

    @actor
    def b(self) -> str:
        with self.guard:
            return str(self.numbers.throw(KeyError("skip")))
