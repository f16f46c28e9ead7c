"""Racy: two actors bump a module global, reading it on one line and storing it with a walrus on the next.

A walrus in a comprehension stores the enclosing function's variable (Python's scoping rule), here the global:
``[COUNT := n + 1 for _ in "x"]`` stores it as ``COUNT = n + 1`` does. A rewriting that knows only assignment
statements records no write, and the two actors look independent.
"""

from lab import Scenario, acceptable, actor, forbidden

COUNT = 0


class WalrusGlobal(Scenario):
    source = "soundness suite: a module global stored by a walrus"
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
        [COUNT := n + 1 for _ in "x"]

    @actor
    def b(self) -> None:
        global COUNT
        n = COUNT
        [COUNT := n + 1 for _ in "x"]

    def observe(self) -> dict[str, int]:
        return {"count": COUNT}
