"""Correct twin of shadowed_class_attribute: the two reads, and the store, under one lab lock."""

from lab import Scenario, acceptable, actor, forbidden


class _Base:
    mode = "base"


class _Sub(_Base):
    pass


class ShadowedClassAttributeLocked(Scenario):
    source = "soundness suite: a subclass attribute that shadows an inherited one"
    line_modules = (__name__,)
    outcomes = (
        acceptable("both reads saw one value", same=True),
        forbidden("the reads disagree: the store fell between them", same=False),
    )

    def setup(self) -> None:
        if "mode" in _Sub.__dict__:
            del _Sub.mode
        self.obj = _Sub()
        self.guard = self.lab.lock("guard")
        self.same = True

    @actor
    def a(self) -> None:
        with self.guard:
            first = self.obj.mode
            second = self.obj.mode
            self.same = first == second

    @actor
    def b(self) -> None:
        with self.guard:
            _Sub.mode = "sub"

    def observe(self) -> dict[str, bool]:
        return {"same": self.same}
