"""Racy, and visible between probes: the check and the append each hold the lab lock, but not across both.

Every access is under the lock, so no lockset check complains; the race is between the two critical sections, at
the lock's own scheduling points, so even probe granularity must find it.
"""

from lab import Scenario, acceptable, actor, forbidden


class SplitCriticalSection(Scenario):
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
            empty = not self.items
        if empty:
            with self.guard:
                self.items.append("a")

    @actor
    def b(self) -> None:
        with self.guard:
            empty = not self.items
        if empty:
            with self.guard:
                self.items.append("b")

    def observe(self) -> dict[str, int]:
        return {"size": len(self.items)}
