"""Racy: two actors bump a module global, reading it on one line and storing it as a ``for`` target on the next.

``for COUNT in [n + 1]: pass`` stores the global once per item, as an assignment would; its write must be seen.
"""

from lab import Scenario, acceptable, actor, forbidden

COUNT = 0


class ForTargetGlobal(Scenario):
    source = "soundness suite: a module global stored by a for target"
    line_modules = (__name__,)
    outcomes = (
        acceptable("both increments landed", count=2),
        forbidden("an increment was lost: both read 0", count=1),
    )

    def setup(self) -> None:
        global COUNT
        COUNT = 0

    @actor
    def a(self) -> None:
        global COUNT
        n = COUNT
        for COUNT in [n + 1]:  # noqa: B007 (the global is the point: stored by the loop)
            pass

    @actor
    def b(self) -> None:
        global COUNT
        n = COUNT
        for COUNT in [n + 1]:  # noqa: B007 (the global is the point: stored by the loop)
            pass

    def observe(self) -> dict[str, int]:
        return {"count": COUNT}
