"""Correct twin of three_actors: the invoice caps its total at 4, so every order, the rate -> price -> invoice one
included, is acceptable. Reaching the capped total still takes the order that reverses two races in a row."""

from lab import Scenario, acceptable, actor, forbidden


class ThreeActorsCapped(Scenario):
    source = "soundness suite: three actors"
    line_modules = (__name__,)
    outcomes = (
        acceptable("the invoice used the old price", total=1),
        acceptable("the invoice used a price built on the old rate", total=2),
        acceptable("the new rate reached the invoice, which capped it", total=4),
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
        self.total = min(self.price_now + 1, 4)

    @actor
    def rate(self) -> None:
        self.rate_now = 3

    def observe(self) -> dict[str, int]:
        return {"total": self.total}
