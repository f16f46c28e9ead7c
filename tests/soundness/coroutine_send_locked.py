"""Correct twin of coroutine_send: each ``send(None)`` under one lab lock."""

from collections.abc import Generator

from lab import Scenario, acceptable, actor, forbidden


class _Pause:
    """An awaitable that suspends once: what makes ``send(None)`` return."""

    def __await__(self) -> Generator[None, None, None]:
        yield


class CoroutineSendLocked(Scenario):
    source = "soundness suite: one coroutine resumed by two actors"
    line_modules = (__name__,)
    outcomes = (
        forbidden("b resumed the coroutine while a was inside it", b="ERROR"),
        forbidden("a resumed the coroutine while b was inside it", a="ERROR"),
        acceptable("each resumed it in turn"),
    )

    def setup(self) -> None:
        self.count = 0
        self.work = self._work()
        self.guard = self.lab.lock("guard")

    async def _work(self) -> None:
        while True:
            self.count += 1
            self.count += 1
            await _Pause()

    def _drive(self) -> str:
        self.work.send(None)
        return "resumed"

    @actor
    def a(self) -> str:
        with self.guard:
            return self._drive()

    @actor
    def b(self) -> str:
        with self.guard:
            return self._drive()
