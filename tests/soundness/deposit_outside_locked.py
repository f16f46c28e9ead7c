"""Correct twin of deposit_outside: each deposit through the helper is made under one lab lock."""

from lab import Scenario, acceptable, actor, forbidden
from tests.soundness._elsewhere import ledger


class DepositOutsideLocked(Scenario):
    source = "soundness suite: a helper not under test, called under a lock"
    line_modules = (__name__,)
    outcomes = (
        acceptable("both deposits landed", balance=2),
        forbidden("a deposit was lost inside the helper", balance=1),
    )

    def setup(self) -> None:
        self.box = [0]
        self.guard = self.lab.lock("guard")

    @actor
    def a(self) -> None:
        with self.guard:
            ledger.deposit(self.box)

    @actor
    def b(self) -> None:
        with self.guard:
            ledger.deposit(self.box)

    def observe(self) -> dict[str, int]:
        return {"balance": self.box[0]}
