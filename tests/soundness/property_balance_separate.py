"""Correct twin of property_balance, with the race removed: each actor deposits into an account of its own."""

from lab import Scenario, acceptable, actor, forbidden


class _Account:
    def __init__(self) -> None:
        self._cents = 0

    @property
    def balance(self) -> int:
        return self._cents

    @balance.setter
    def balance(self, value: int) -> None:
        self._cents = value


class PropertyBalanceSeparate(Scenario):
    source = "soundness suite: a property"
    line_modules = (__name__,)
    outcomes = (
        acceptable("each deposit landed in its own account", a_balance=1, b_balance=1),
        forbidden("a deposit was lost", a_balance=0),
        forbidden("a deposit was lost", b_balance=0),
    )

    def setup(self) -> None:
        self.account_a = _Account()
        self.account_b = _Account()

    @actor
    def a(self) -> None:
        self.account_a.balance += 1

    @actor
    def b(self) -> None:
        self.account_b.balance += 1

    def observe(self) -> dict[str, int]:
        return {"a_balance": self.account_a.balance, "b_balance": self.account_b.balance}
