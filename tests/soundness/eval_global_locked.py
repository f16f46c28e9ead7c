"""Correct twin of eval_global: a's flag and act, and b's check and read, each under one lab lock."""

from lab import Scenario, acceptable, actor, forbidden

TALLY: list[int] = []


class EvalGlobalLocked(Scenario):
    source = "soundness suite: ``eval`` of code that appends to a module global, with the caller's globals"
    line_modules = (__name__,)
    outcomes = (
        forbidden("b saw the flag but not the act", b="0"),
        acceptable("b read before the flag, or after the act"),
    )

    def setup(self) -> None:
        self.sent = False
        TALLY.clear()
        self.guard = self.lab.lock("guard")

    @actor
    def a(self) -> None:
        with self.guard:
            self.sent = True
            eval("TALLY.append(1)")

    @actor
    def b(self) -> str:
        with self.guard:
            if self.sent:
                return f"{len(TALLY)!r}"
        return "early"
