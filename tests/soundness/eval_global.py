"""Racy: a sets a flag, then ``eval`` (with the caller's globals) appends to a module global; b, seeing the flag,
reads the global before the append.

The evaluated code is not rewritten: ``eval`` without a namespace writes everything the caller's globals reach.
"""

from lab import Scenario, acceptable, actor, forbidden

TALLY: list[int] = []


class EvalGlobal(Scenario):
    source = "soundness suite: ``eval`` of code that appends to a module global, with the caller's globals"
    line_modules = (__name__,)
    outcomes = (
        forbidden("b saw the flag but not the act", b="0"),
        acceptable("b read before the flag, or after the act"),
    )

    def setup(self) -> None:
        self.sent = False
        TALLY.clear()

    @actor
    def a(self) -> None:
        self.sent = True
        eval("TALLY.append(1)")

    @actor
    def b(self) -> str:
        if self.sent:
            return f"{len(TALLY)!r}"
        return "early"
