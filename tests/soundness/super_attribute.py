"""Racy: one actor reads a base class's rate twice with ``super().rate``, while the other rebinds the base's rate.

The subclass has a ``rate`` of its own; ``super()`` skips it and reads the base's, so the two reads can disagree.
"""

from lab import Scenario, acceptable, actor, forbidden


class _Base:
    rate = 1


class _Sub(_Base):
    rate = 100

    def twice(self) -> bool:
        first = super().rate
        second = super().rate
        return first == second


class SuperAttribute(Scenario):
    source = "soundness suite: a base class attribute read through super()"
    line_modules = (__name__,)
    outcomes = (
        acceptable("both reads saw one value", same=True),
        forbidden("the reads disagree: the store fell between them", same=False),
    )

    def setup(self) -> None:
        _Base.rate = 1
        self.sub = _Sub()
        self.same = True

    @actor
    def a(self) -> None:
        self.same = self.sub.twice()

    @actor
    def b(self) -> None:
        _Base.rate = 2

    def observe(self) -> dict[str, bool]:
        return {"same": self.same}
