"""Racy: a sets a flag, then a helper in a module not under test appends to ``holder.store.items``; b, seeing
the flag, reads those items (through a reference of its own) before the append.

A call into code the lab does not rewrite writes everything reachable from its arguments, not only the arguments.
"""

from lab import Scenario, acceptable, actor, forbidden
from tests.soundness._elsewhere import ledger


class HelperOutsideDeep(Scenario):
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

    @actor
    def a(self) -> None:
        self.sent = True
        ledger.add(self.holder, 1)

    @actor
    def b(self) -> str:
        if self.sent:
            return f"{len(self.items)!r}"
        return "early"
