"""Racy: two actors bump a module global, reading it on one line and writing it on the next; an update is lost.

The counter is a module global, reached by no ``self`` attribute: a footprint read off ``self.<name>`` misses it.
"""

from lab import Scenario, acceptable, actor, forbidden

COUNT = 0


class GlobalCounter(Scenario):
    source = "soundness suite: a module global"
    line_modules = (__name__,)
    outcomes = (
        acceptable("both increments landed", count=2),
        forbidden("an increment was lost: both read 0", count=1),
    )

    def setup(self) -> None:
        global COUNT
        COUNT = 0

    @actor
    def a(self) -> None:
        global COUNT
        n = COUNT
        COUNT = n + 1

    @actor
    def b(self) -> None:
        global COUNT
        n = COUNT
        COUNT = n + 1

    def observe(self) -> dict[str, int]:
        return {"count": COUNT}
