"""Correct twin of getter_outside: a's flag and act, and b's check and read, each under one lab lock."""

from lab import Scenario, acceptable, actor, forbidden
from tests.soundness._elsewhere import ledger


class GetterOutsideLocked(Scenario):
    source = "soundness suite: a property getter in a module not under test"
    line_modules = (__name__,)
    outcomes = (
        forbidden("b saw the flag but not the act", b="0"),
        acceptable("b read before the flag, or after the act"),
    )

    def setup(self) -> None:
        self.sent = False
        self.holder = ledger.Holder()
        self.items = self.holder.store.items
        self.guard = self.lab.lock("guard")

    @actor
    def a(self) -> None:
        with self.guard:
            self.sent = True
            self.items.append(1)

    @actor
    def b(self) -> str:
        with self.guard:
            if self.sent:
                return f"{self.holder.count!r}"
        return "early"
