"""Correct twin of check_then_act: the check and the append run under one lab lock."""

from lab import Scenario, acceptable, actor, forbidden


class CheckThenActLocked(Scenario):
    source = "soundness suite: check-then-act"
    line_modules = (__name__,)
    outcomes = (
        acceptable("a was first", items=["a"]),
        acceptable("b was first", items=["b"]),
        forbidden("both saw an empty list and appended", items=["a", "b"]),
        forbidden("both saw an empty list and appended", items=["b", "a"]),
    )

    def setup(self) -> None:
        self.items: list[str] = []
        self.guard = self.lab.lock("guard")

    @actor
    def a(self) -> None:
        with self.guard:
            if not self.items:
                self.items.append("a")

    @actor
    def b(self) -> None:
        with self.guard:
            if not self.items:
                self.items.append("b")

    def observe(self) -> dict[str, list[str]]:
        return {"items": list(self.items)}
