"""Racy: both actors deposit through one call of a helper the lab does not instrument, which reads, then writes.

The helper is the program's own Python code, outside the modules under test: a real thread can be switched out of
it between its read and its write, so a deposit is lost. The lab runs such a call as one step (it cannot put a
scheduling point inside code it does not rewrite), so it must not call the program correct: the step is one the
atomicity check reports as splittable, with the advice to put the helper's module under test.
"""

from lab import Scenario, acceptable, actor, forbidden
from tests.soundness._elsewhere import ledger


class DepositOutside(Scenario):
    source = "soundness suite: a read-modify-write inside one call of a helper not under test"
    line_modules = (__name__,)
    outcomes = (
        acceptable("both deposits landed", balance=2),
        forbidden("a deposit was lost inside the helper", balance=1),
    )

    def setup(self) -> None:
        self.box = [0]

    @actor
    def a(self) -> None:
        ledger.deposit(self.box)

    @actor
    def b(self) -> None:
        ledger.deposit(self.box)

    def observe(self) -> dict[str, int]:
        return {"balance": self.box[0]}
