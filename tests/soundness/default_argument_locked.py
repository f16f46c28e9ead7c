"""Correct twin of default_argument: each call that uses the shared default runs under one lab lock."""

from lab import Scenario, acceptable, actor, forbidden

_SEEN: list[str] = []


def _remember(page: str, seen: list[str] = _SEEN) -> None:
    if page not in seen:
        seen.append(page)


class DefaultArgumentLocked(Scenario):
    source = "soundness suite: a mutable default argument"
    line_modules = (__name__,)
    outcomes = (
        acceptable("the page was remembered once", pages=1),
        forbidden("the page was remembered twice: both checked before either appended", pages=2),
    )

    def setup(self) -> None:
        _SEEN.clear()
        self.guard = self.lab.lock("guard")

    @actor
    def a(self) -> None:
        with self.guard:
            _remember("home")

    @actor
    def b(self) -> None:
        with self.guard:
            _remember("home")

    def observe(self) -> dict[str, int]:
        return {"pages": len(_SEEN)}
