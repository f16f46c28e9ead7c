"""Correct twin of callback_outside: a's flag and act, and b's check and read, each under one lab lock."""

from lab import Scenario, acceptable, actor, forbidden
from tests.soundness._elsewhere import ledger


class CallbackOutsideLocked(Scenario):
    source = "soundness suite: a callback in a module not under test, mapped by a built-in"
    line_modules = (__name__,)
    outcomes = (
        forbidden("b saw the flag but not the act", b="[0]"),
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
                return f"{list(map(ledger.stored_count, [self.holder]))!r}"
        return "early"
