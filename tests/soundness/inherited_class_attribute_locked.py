"""Correct twin of inherited_class_attribute: the two reads, and the store, under one lab lock."""

from lab import Scenario, acceptable, actor, forbidden


class _Base:
    limit = 1


class _Sub(_Base):
    pass


class InheritedClassAttributeLocked(Scenario):
    source = "soundness suite: a class attribute inherited by a subclass"
    line_modules = (__name__,)
    outcomes = (
        acceptable("both reads saw one value", same=True),
        forbidden("the reads disagree: the store fell between them", same=False),
    )

    def setup(self) -> None:
        _Base.limit = 1
        self.guard = self.lab.lock("guard")
        self.same = True

    @actor
    def a(self) -> None:
        with self.guard:
            first = _Sub.limit
            second = _Sub.limit
            self.same = first == second

    @actor
    def b(self) -> None:
        with self.guard:
            _Base.limit = 2

    def observe(self) -> dict[str, bool]:
        return {"same": self.same}
