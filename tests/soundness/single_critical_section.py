"""Correct twin of split_critical_section: the check and the append share one critical section."""

from lab import Scenario, acceptable, actor, forbidden


class SingleCriticalSection(Scenario):
    source = "soundness suite: check and act in two critical sections"
    line_modules = (__name__,)
    outcomes = (
        acceptable("exactly one item was added", size=1),
        forbidden("both saw an empty list, each in its own critical section, and both added", size=2),
    )

    def setup(self) -> None:
        self.items: list[str] = []
        self.guard = self.lab.lock("guard")

    @actor
    def a(self) -> None:
        with self.guard:
            if not self.items:
                self.items.append("a")

    @actor
    def b(self) -> None:
        with self.guard:
            if not self.items:
                self.items.append("b")

    def observe(self) -> dict[str, int]:
        return {"size": len(self.items)}
