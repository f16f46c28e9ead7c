"""Correct twin of dataclass_stock: the check and the sale run under one lab lock."""

from dataclasses import dataclass

from lab import Scenario, acceptable, actor, forbidden


@dataclass
class _Stock:
    units: int


class DataclassStockLocked(Scenario):
    source = "soundness suite: a dataclass"
    line_modules = (__name__,)
    outcomes = (
        acceptable("the last unit was sold once", units=0),
        forbidden("the last unit was sold twice: both checked before either sold", units=-1),
    )

    def setup(self) -> None:
        self.stock = _Stock(units=1)
        self.guard = self.lab.lock("guard")

    @actor
    def a(self) -> None:
        with self.guard:
            if self.stock.units > 0:
                self.stock.units -= 1

    @actor
    def b(self) -> None:
        with self.guard:
            if self.stock.units > 0:
                self.stock.units -= 1

    def observe(self) -> dict[str, int]:
        return {"units": self.stock.units}
