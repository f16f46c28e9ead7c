"""Racy, three actors: a new rate reaches the invoice only in the order rate, price, invoice; then it breaks the cap.

``rate`` sets the rate, ``price`` derives the price from the rate, ``invoice`` derives the total from the price, one
line each. Only the order rate -> price -> invoice carries the new rate all the way, to a total over the cap of 4.
Finding it means reversing two races in a row; a reduction that drops a backtrack choice because the racing actor
is asleep at that point misses it.
"""

from lab import Scenario, acceptable, actor, forbidden


class ThreeActors(Scenario):
    source = "soundness suite: three actors"
    line_modules = (__name__,)
    outcomes = (
        acceptable("the invoice used the old price", total=1),
        acceptable("the invoice used a price built on the old rate", total=2),
        forbidden("the new rate reached the invoice unchecked: over the cap of 4", total=5),
    )

    def setup(self) -> None:
        self.rate_now = 0
        self.price_now = 0
        self.total = 0

    @actor
    def price(self) -> None:
        self.price_now = self.rate_now + 1

    @actor
    def invoice(self) -> None:
        self.total = self.price_now + 1

    @actor
    def rate(self) -> None:
        self.rate_now = 3

    def observe(self) -> dict[str, int]:
        return {"total": self.total}
