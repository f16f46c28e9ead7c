"""Correct twin of helper_module: each actor calls the helper under one lab lock."""

from lab import Scenario, acceptable, actor, forbidden
from tests.soundness import _shared


class HelperModuleLocked(Scenario):
    source = "soundness suite: a helper in another module"
    line_modules = (__name__, _shared.__name__)
    outcomes = (
        acceptable("both visits counted", visits=2),
        forbidden("a visit was lost: both read 0", visits=1),
    )

    def setup(self) -> None:
        self.tally = {"visits": 0}
        self.guard = self.lab.lock("guard")

    @actor
    def a(self) -> None:
        with self.guard:
            _shared.bump(self.tally, "visits")

    @actor
    def b(self) -> None:
        with self.guard:
            _shared.bump(self.tally, "visits")

    def observe(self) -> dict[str, int]:
        return {"visits": self.tally["visits"]}
