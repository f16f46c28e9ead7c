"""Racy: one actor counts through ``globals()["hits"]``, the other through ``global hits``; an increment is lost.

The module's namespace dict and the module's globals are one piece of state, under two spellings."""

from lab import Scenario, acceptable, actor, forbidden

hits = 0


class GlobalsDict(Scenario):
    source = "soundness suite: a module global through globals()"
    line_modules = (__name__,)
    outcomes = (
        acceptable("both increments landed", hits=2),
        forbidden("an increment was lost: both read 0", hits=1),
    )

    def setup(self) -> None:
        global hits
        hits = 0

    @actor
    def a(self) -> None:
        namespace = globals()
        n = namespace["hits"]
        namespace["hits"] = n + 1

    @actor
    def b(self) -> None:
        global hits
        n = hits
        hits = n + 1

    def observe(self) -> dict[str, int]:
        return {"hits": hits}
