"""Racy: a resumes a shared generator with ``send``, b with ``throw``, which the generator catches.

While one actor is inside the generator, the other resuming it raises ValueError ("generator already executing").
"""

from collections.abc import Generator

from lab import Scenario, acceptable, actor, forbidden


class GeneratorSendThrow(Scenario):
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
        return str(self.numbers.send(1))

    @actor
    def b(self) -> str:
        return str(self.numbers.throw(KeyError("skip")))
