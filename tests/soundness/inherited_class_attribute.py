"""Racy: one actor reads a limit twice through a subclass that inherits it, while the other rebinds the base's.

``_Sub.limit`` is found in ``_Base``: each read is a read of the base's ``limit``, which the other actor writes, so
the two reads can disagree.
"""

from lab import Scenario, acceptable, actor, forbidden


class _Base:
    limit = 1


class _Sub(_Base):
    pass


class InheritedClassAttribute(Scenario):
    source = "soundness suite: a class attribute inherited by a subclass"
    line_modules = (__name__,)
    outcomes = (
        acceptable("both reads saw one value", same=True),
        forbidden("the reads disagree: the store fell between them", same=False),
    )

    def setup(self) -> None:
        _Base.limit = 1
        self.same = True

    @actor
    def a(self) -> None:
        first = _Sub.limit
        second = _Sub.limit
        self.same = first == second

    @actor
    def b(self) -> None:
        _Base.limit = 2

    def observe(self) -> dict[str, bool]:
        return {"same": self.same}
