"""Racy: a sets a flag, then appends to the store's items; b, seeing the flag, counts them through a property
defined in a module not under test, before the append.

The getter is code the lab does not rewrite: reading it is charged with everything the object reaches, not the
object alone (it reads ``self.store.items``).
"""

from lab import Scenario, acceptable, actor, forbidden
from tests.soundness._elsewhere import ledger


class GetterOutside(Scenario):
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

    @actor
    def a(self) -> None:
        self.sent = True
        self.items.append(1)

    @actor
    def b(self) -> str:
        if self.sent:
            return f"{self.holder.count!r}"
        return "early"
