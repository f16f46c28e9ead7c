"""Racy: two actors call one closure that bumps a ``nonlocal`` cell in a read and a separate write.

The counter lives in a closure cell made by ``setup``: no attribute, no global names it.
"""

from lab import Scenario, acceptable, actor, forbidden


class NonlocalCounter(Scenario):
    source = "soundness suite: a closure cell (nonlocal)"
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
            count = n + 1

        def read() -> int:
            return count

        self.bump = bump
        self.read = read

    @actor
    def a(self) -> None:
        self.bump()

    @actor
    def b(self) -> None:
        self.bump()

    def observe(self) -> dict[str, int]:
        return {"count": self.read()}
