"""Racy: each actor runs an event loop whose coroutine reads a shared total, awaits asyncio.sleep, then writes it.

Two threads, each in its own ``asyncio.run``: the sleep between the read and the write lets the other thread's
read in, and an update is lost. The loop waits on the clock through its selector, so the virtual clock must move
inside it for the run to end at all.
"""

import asyncio

from lab import Scenario, acceptable, actor, forbidden


class AsyncioSleep(Scenario):
    source = "soundness suite: asyncio.sleep inside an actor"
    line_modules = (__name__,)
    outcomes = (
        acceptable("both updates landed", total=2),
        forbidden("an update was lost across the await", total=1),
    )

    def setup(self) -> None:
        self.total = 0

    async def _add(self) -> None:
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
