"""Correct twin of asyncio_sleep: each coroutine holds one threading.Lock from its read to its write."""

import asyncio
import threading

from lab import Scenario, acceptable, actor, forbidden


class AsyncioSleepLocked(Scenario):
    source = "soundness suite: asyncio.sleep inside an actor"
    line_modules = (__name__,)
    outcomes = (
        acceptable("both updates landed", total=2),
        forbidden("an update was lost across the await", total=1),
    )

    def setup(self) -> None:
        self.total = 0
        self.guard = threading.Lock()

    async def _add(self) -> None:
        with self.guard:
            n = self.total
            await asyncio.sleep(0.01)
            self.total = n + 1

    @actor
    def a(self) -> None:
        asyncio.run(self._add())

    @actor
    def b(self) -> None:
        asyncio.run(self._add())

    def observe(self) -> dict[str, int]:
        return {"total": self.total}
