"""Correct twin of globals_dict: both increments under one lab lock."""

from lab import Scenario, acceptable, actor, forbidden

hits = 0


class GlobalsDictLocked(Scenario):
    source = "soundness suite: a module global through globals()"
    line_modules = (__name__,)
    outcomes = (
        acceptable("both increments landed", hits=2),
        forbidden("an increment was lost: both read 0", hits=1),
    )

    def setup(self) -> None:
        global hits
        hits = 0
        self.guard = self.lab.lock("guard")

    @actor
    def a(self) -> None:
        with self.guard:
            namespace = globals()
            n = namespace["hits"]
            namespace["hits"] = n + 1

    @actor
    def b(self) -> None:
        global hits
        with self.guard:
            n = hits
            hits = n + 1

    def observe(self) -> dict[str, int]:
        return {"hits": hits}
