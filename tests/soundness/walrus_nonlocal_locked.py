"""Correct twin of walrus_nonlocal: each actor calls the closure under one lab lock."""

from lab import Scenario, acceptable, actor, forbidden


class WalrusNonlocalLocked(Scenario):
    source = "soundness suite: a closure cell stored by a walrus"
    line_modules = (__name__,)
    outcomes = (
        acceptable("both increments landed", count=2),
        forbidden("an increment was lost: both read 0", count=1),
    )

    def setup(self) -> None:
        count = 0

        def bump() -> None:
            nonlocal count
            n = count
            (count := n + 1)

        def read() -> int:
            return count

        self.bump = bump
        self.read = read
        self.guard = self.lab.lock("guard")

    @actor
    def a(self) -> None:
        with self.guard:
            self.bump()

    @actor
    def b(self) -> None:
        with self.guard:
            self.bump()

    def observe(self) -> dict[str, int]:
        return {"count": self.read()}
