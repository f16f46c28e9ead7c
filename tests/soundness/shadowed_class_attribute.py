"""Racy: one actor reads ``obj.mode`` (inherited from the base class) twice, while the other gives the subclass a
``mode`` of its own.

The subclass's ``mode`` shadows the base's: a read before the store finds the base's value, a read after it finds the
subclass's, so each read is also a read of the subclass's ``mode`` and the two can disagree.
"""

from lab import Scenario, acceptable, actor, forbidden


class _Base:
    mode = "base"


class _Sub(_Base):
    pass


class ShadowedClassAttribute(Scenario):
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
        self.same = True

    @actor
    def a(self) -> None:
        first = self.obj.mode
        second = self.obj.mode
        self.same = first == second

    @actor
    def b(self) -> None:
        _Sub.mode = "sub"

    def observe(self) -> dict[str, bool]:
        return {"same": self.same}
