"""Racy: one actor bumps ``self.hits``, the other the same entry through ``vars(self)["hits"]``; a hit is lost.

Two spellings of one piece of state: an attribute, and a key of the instance's ``__dict__``.
"""

from lab import Scenario, acceptable, actor, forbidden


class VarsAlias(Scenario):
    source = "soundness suite: an attribute reached through vars()"
    line_modules = (__name__,)
    outcomes = (
        acceptable("both hits counted", hits=2),
        forbidden("a hit was lost: both read 0", hits=1),
    )

    def setup(self) -> None:
        self.hits = 0

    @actor
    def a(self) -> None:
        n = self.hits
        self.hits = n + 1

    @actor
    def b(self) -> None:
        n = vars(self)["hits"]
        vars(self)["hits"] = n + 1

    def observe(self) -> dict[str, int]:
        return {"hits": self.hits}
