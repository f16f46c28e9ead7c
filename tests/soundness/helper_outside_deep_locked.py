"""Correct twin of helper_outside_deep: a's flag and act, and b's check and read, each under one lab lock."""

from lab import Scenario, acceptable, actor, forbidden
from tests.soundness._elsewhere import ledger


class HelperOutsideDeepLocked(Scenario):
    source = "soundness suite: a helper in a module not under test appending to ``holder.store.items``"
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
            ledger.add(self.holder, 1)

    @actor
    def b(self) -> str:
        with self.guard:
            if self.sent:
                return f"{len(self.items)!r}"
        return "early"
