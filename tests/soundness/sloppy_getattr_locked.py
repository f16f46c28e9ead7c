"""Correct twin of sloppy_getattr: each read-modify-write under one lab lock."""

from lab import Scenario, acceptable, actor, forbidden


class Sloppy:
    """Answers every missing attribute with a KeyError, not the AttributeError Python expects."""

    def __init__(self) -> None:
        self.count = 0

    def __getattr__(self, name: str) -> object:
        raise KeyError(name)


class SloppyGetattrLocked(Scenario):
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
        with self.guard:
            n = self.tally.count
            self.tally.count = n + 1

    @actor
    def b(self) -> None:
        with self.guard:
            n = self.tally.count
            self.tally.count = n + 1

    def observe(self) -> dict[str, int]:
        return {"count": self.tally.count}
