"""Racy: two actors deposit through a ledger module the lab does not instrument: read, then write; a deposit is lost.

``ledger`` lives outside the modules under test, so the lab cannot see what its functions touch: it must assume
they touch everything they are handed.
"""

from lab import Scenario, acceptable, actor, forbidden
from tests.soundness._elsewhere import ledger


class HelperOutside(Scenario):
    source = "soundness suite: a helper in a module not under test"
    line_modules = (__name__,)
    outcomes = (
        acceptable("both deposits landed", balance=2),
        forbidden("a deposit was lost: both read 0", balance=1),
    )

    def setup(self) -> None:
        self.box = [0]

    @actor
    def a(self) -> None:
        n = ledger.read(self.box)
        ledger.write(self.box, n + 1)

    @actor
    def b(self) -> None:
        n = ledger.read(self.box)
        ledger.write(self.box, n + 1)

    def observe(self) -> dict[str, int]:
        return {"balance": self.box[0]}
