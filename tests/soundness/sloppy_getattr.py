"""Racy: a lost update on a counter held by an object whose ``__getattr__`` raises KeyError for a missing name.

The lab must not call the learner's ``__getattr__`` to read attributes of its own (a store's name, say): the
scenario explores as any other, and FAILs for its race, not for the lab's lookup.
"""

from lab import Scenario, acceptable, actor, forbidden


class Sloppy:
    """Answers every missing attribute with a KeyError, not the AttributeError Python expects."""

    def __init__(self) -> None:
        self.count = 0

    def __getattr__(self, name: str) -> object:
        raise KeyError(name)


class SloppyGetattr(Scenario):
    source = "soundness suite: an object whose __getattr__ raises KeyError"
    line_modules = (__name__,)
    outcomes = (
        acceptable("both bumps landed", count=2),
        forbidden("a bump was lost", count=1),
    )

    def setup(self) -> None:
        self.tally = Sloppy()
        self.guard = self.lab.lock("guard")

    @actor
    def a(self) -> None:
        n = self.tally.count
        self.tally.count = n + 1

    @actor
    def b(self) -> None:
        n = self.tally.count
        self.tally.count = n + 1

    def observe(self) -> dict[str, int]:
        return {"count": self.tally.count}
