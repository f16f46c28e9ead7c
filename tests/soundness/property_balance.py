"""Racy: two actors do ``account.balance += 1`` on one account whose balance is a property; a deposit is lost.

The actor's line names only ``balance``; the getter and the setter, each on its own line, touch ``_cents``.
"""

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


class PropertyBalance(Scenario):
    source = "soundness suite: a property"
    line_modules = (__name__,)
    outcomes = (
        acceptable("both deposits landed", balance=2),
        forbidden("a deposit was lost: both getters ran before either setter", balance=1),
    )

    def setup(self) -> None:
        self.account = _Account()

    @actor
    def a(self) -> None:
        self.account.balance += 1

    @actor
    def b(self) -> None:
        self.account.balance += 1

    def observe(self) -> dict[str, int]:
        return {"balance": self.account.balance}
