"""Racy: two actors bump a class attribute (``Counter.total``), reading it on one line and writing it on the next.

The total belongs to the class, not to any instance the scenario holds.
"""

from lab import Scenario, acceptable, actor, forbidden


class _Counter:
    total = 0


class ClassAttribute(Scenario):
    source = "soundness suite: a class attribute"
    line_modules = (__name__,)
    outcomes = (
        acceptable("both increments landed", total=2),
        forbidden("an increment was lost: both read 0", total=1),
    )

    def setup(self) -> None:
        _Counter.total = 0

    @actor
    def a(self) -> None:
        n = _Counter.total
        _Counter.total = n + 1

    @actor
    def b(self) -> None:
        n = _Counter.total
        _Counter.total = n + 1

    def observe(self) -> dict[str, int]:
        return {"total": _Counter.total}
