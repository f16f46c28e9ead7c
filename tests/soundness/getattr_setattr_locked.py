"""Correct twin of getattr_setattr: both actors bump ``box.hits`` under one lab lock."""

from lab import Scenario, acceptable, actor, forbidden


class _Box:
    def __init__(self) -> None:
        self.hits = 0


class GetattrSetattrLocked(Scenario):
    source = "soundness suite: getattr/setattr"
    line_modules = (__name__,)
    outcomes = (
        acceptable("both hits counted", hits=2),
        forbidden("a hit was lost: both read 0", hits=1),
    )

    def setup(self) -> None:
        self.box = _Box()
        self.guard = self.lab.lock("guard")

    @actor
    def a(self) -> None:
        with self.guard:
            n = getattr(self.box, "hits")  # noqa: B009 -- the string-named access is the point of this program
            setattr(self.box, "hits", n + 1)  # noqa: B010

    @actor
    def b(self) -> None:
        with self.guard:
            n = self.box.hits
            self.box.hits = n + 1

    def observe(self) -> dict[str, int]:
        return {"hits": self.box.hits}
