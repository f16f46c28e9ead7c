"""Racy: a function remembers pages in its mutable default argument, if new; two actors store one page twice.

The shared list is the default value of a parameter: every call that omits the argument gets the same list.
"""

from lab import Scenario, acceptable, actor, forbidden

_SEEN: list[str] = []


def _remember(page: str, seen: list[str] = _SEEN) -> None:
    if page not in seen:
        seen.append(page)


class DefaultArgument(Scenario):
    source = "soundness suite: a mutable default argument"
    line_modules = (__name__,)
    outcomes = (
        acceptable("the page was remembered once", pages=1),
        forbidden("the page was remembered twice: both checked before either appended", pages=2),
    )

    def setup(self) -> None:
        _SEEN.clear()

    @actor
    def a(self) -> None:
        _remember("home")

    @actor
    def b(self) -> None:
        _remember("home")

    def observe(self) -> dict[str, int]:
        return {"pages": len(_SEEN)}
