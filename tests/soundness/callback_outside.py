"""Racy: a sets a flag, then appends to the store's items; b, seeing the flag, counts them with ``map`` of a
function defined in a module not under test, before the append.

The built-in calls a function the lab does not rewrite: what it reaches through what it is handed (``holder.store
.items``) is charged, not only the holder.
"""

from lab import Scenario, acceptable, actor, forbidden
from tests.soundness._elsewhere import ledger


class CallbackOutside(Scenario):
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

    @actor
    def a(self) -> None:
        self.sent = True
        self.items.append(1)

    @actor
    def b(self) -> str:
        if self.sent:
            return f"{list(map(ledger.stored_count, [self.holder]))!r}"
        return "early"
