"""Correct twin of vars_alias: both spellings of the bump run under one lab lock."""

from lab import Scenario, acceptable, actor, forbidden


class VarsAliasLocked(Scenario):
    source = "soundness suite: an attribute reached through vars()"
    line_modules = (__name__,)
    outcomes = (
        acceptable("both hits counted", hits=2),
        forbidden("a hit was lost: both read 0", hits=1),
    )

    def setup(self) -> None:
        self.hits = 0
        self.guard = self.lab.lock("guard")

    @actor
    def a(self) -> None:
        with self.guard:
            n = self.hits
            self.hits = n + 1

    @actor
    def b(self) -> None:
        with self.guard:
            n = vars(self)["hits"]
            vars(self)["hits"] = n + 1

    def observe(self) -> dict[str, int]:
        return {"hits": self.hits}
