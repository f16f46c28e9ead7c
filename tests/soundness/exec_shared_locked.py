"""Correct twin of exec_shared: a's flag and act, and b's check and read, each under one lab lock."""

from lab import Scenario, acceptable, actor, forbidden


class ExecSharedLocked(Scenario):
    source = "soundness suite: ``exec`` of code that appends to a shared list"
    line_modules = (__name__,)
    outcomes = (
        forbidden("b saw the flag but not the act", b="0"),
        acceptable("b read before the flag, or after the act"),
    )

    def setup(self) -> None:
        self.sent = False
        self.items: list[int] = []
        self.guard = self.lab.lock("guard")

    @actor
    def a(self) -> None:
        with self.guard:
            self.sent = True
            exec("items.append(1)", {"items": self.items})

    @actor
    def b(self) -> str:
        with self.guard:
            if self.sent:
                return f"{len(self.items)!r}"
        return "early"
