"""Correct twin of super_attribute: the two reads, and the store, under one lab lock."""

from lab import Scenario, acceptable, actor, forbidden


class _Base:
    rate = 1


class _Sub(_Base):
    rate = 100

    def twice(self) -> bool:
        first = super().rate
        second = super().rate
        return first == second


class SuperAttributeLocked(Scenario):
    source = "soundness suite: a base class attribute read through super()"
    line_modules = (__name__,)
    outcomes = (
        acceptable("both reads saw one value", same=True),
        forbidden("the reads disagree: the store fell between them", same=False),
    )

    def setup(self) -> None:
        _Base.rate = 1
        self.sub = _Sub()
        self.guard = self.lab.lock("guard")
        self.same = True

    @actor
    def a(self) -> None:
        with self.guard:
            self.same = self.sub.twice()

    @actor
    def b(self) -> None:
        with self.guard:
            _Base.rate = 2

    def observe(self) -> dict[str, bool]:
        return {"same": self.same}
