"""Correct twin of closure_list: the check and the append on the captured list run under one lab lock."""

from lab import Scenario, acceptable, actor, forbidden


class ClosureListLocked(Scenario):
    source = "soundness suite: a list captured by a closure"
    line_modules = (__name__,)
    outcomes = (
        acceptable("ann joined once", members=1),
        forbidden("ann joined twice: both checked before either appended", members=2),
    )

    def setup(self) -> None:
        members: list[str] = []
        guard = self.lab.lock("guard")

        def join(name: str) -> None:
            with guard:
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
