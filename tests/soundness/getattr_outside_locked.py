"""Correct twin of getattr_outside: a's flag and store, and b's check and loop, each under one lab lock."""

from lab import Scenario, acceptable, actor, forbidden
from tests.soundness._elsewhere import ledger


class GetattrOutsideLocked(Scenario):
    source = "soundness suite: a __getattr__ in a module not under test"
    line_modules = (__name__,)
    outcomes = (
        forbidden("b saw the flag but not the key", b="0"),
        acceptable("b read before the flag, or after the store"),
    )

    def setup(self) -> None:
        self.sent = False
        self.base: dict[str, int] = {"a": 0}
        self.proxy = ledger.Proxy(self.base)
        self.guard = self.lab.lock("guard")

    @actor
    def a(self) -> None:
        with self.guard:
            self.sent = True
            self.base["k"] = 1

    @actor
    def b(self) -> str:
        with self.guard:
            if self.sent:
                return str(getattr(self.proxy, "k", 0))
        return "early"
