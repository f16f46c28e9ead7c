"""Correct twin of helper_outside: each deposit reads and writes the ledger under one lab lock."""

from lab import Scenario, acceptable, actor, forbidden
from tests.soundness._elsewhere import ledger


class HelperOutsideLocked(Scenario):
    source = "soundness suite: a helper in a module not under test"
    line_modules = (__name__,)
    outcomes = (
        acceptable("both deposits landed", balance=2),
        forbidden("a deposit was lost: both read 0", balance=1),
    )

    def setup(self) -> None:
        self.box = [0]
        self.guard = self.lab.lock("guard")

    @actor
    def a(self) -> None:
        with self.guard:
            n = ledger.read(self.box)
            ledger.write(self.box, n + 1)

    @actor
    def b(self) -> None:
        with self.guard:
            n = ledger.read(self.box)
            ledger.write(self.box, n + 1)

    def observe(self) -> dict[str, int]:
        return {"balance": self.box[0]}
