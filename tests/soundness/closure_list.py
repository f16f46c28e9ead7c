"""Racy: a closure adds a member to a list it captured, if absent; two actors add the same one and it is there twice.

The list is captured by the closure made in ``setup``: the actors reach it through no attribute of their own.
"""

from lab import Scenario, acceptable, actor, forbidden


class ClosureList(Scenario):
    source = "soundness suite: a list captured by a closure"
    line_modules = (__name__,)
    outcomes = (
        acceptable("ann joined once", members=1),
        forbidden("ann joined twice: both checked before either appended", members=2),
    )

    def setup(self) -> None:
        members: list[str] = []

        def join(name: str) -> None:
            if name not in members:
                members.append(name)

        def count() -> int:
            return len(members)

        self.join = join
        self.count = count

    @actor
    def a(self) -> None:
        self.join("ann")

    @actor
    def b(self) -> None:
        self.join("ann")

    def observe(self) -> dict[str, int]:
        return {"members": self.count()}
