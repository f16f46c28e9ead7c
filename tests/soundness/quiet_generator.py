"""Racy: two actors call ``next`` on one shared generator whose body touches nothing shared.

CPython marks a generator running as it resumes it and may switch threads before its body reaches the ``yield``: a
``next`` from another thread then raises ValueError ("generator already executing"). The body has no access of its
own, so no scheduling point falls inside it; at instruction granularity the resumption itself opens one.
"""

from collections.abc import Iterator

from lab import Scenario, acceptable, actor, forbidden


def _counting() -> Iterator[int]:
    yield from range(10)


class QuietGenerator(Scenario):
    source = "soundness suite: a generator with no access of its own, resumed by two actors"
    line_modules = (__name__,)
    outcomes = (
        forbidden("b resumed the generator while a was inside it", b="busy"),
        forbidden("a resumed the generator while b was inside it", a="busy"),
        acceptable("each took a number"),
    )

    def setup(self) -> None:
        self.numbers = _counting()

    @actor
    def a(self) -> str:
        try:
            return str(next(self.numbers))
        except ValueError:
            return "busy"

    @actor
    def b(self) -> str:
        try:
            return str(next(self.numbers))
        except ValueError:
            return "busy"
