"""Racy: two actors bump a tally through a helper in another module, which reads and writes it on two lines.

The write happens in ``_shared.bump``, another module: the actors' own lines only pass the dict along.
"""

from lab import Scenario, acceptable, actor, forbidden
from tests.soundness import _shared


class HelperModule(Scenario):
    source = "soundness suite: a helper in another module"
    line_modules = (__name__, _shared.__name__)
    outcomes = (
        acceptable("both visits counted", visits=2),
        forbidden("a visit was lost: both read 0", visits=1),
    )

    def setup(self) -> None:
        self.tally = {"visits": 0}

    @actor
    def a(self) -> None:
        _shared.bump(self.tally, "visits")

    @actor
    def b(self) -> None:
        _shared.bump(self.tally, "visits")

    def observe(self) -> dict[str, int]:
        return {"visits": self.tally["visits"]}
