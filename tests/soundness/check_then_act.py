"""Racy: ``if not self.items: self.items.append(x)``, two actors; the list that should hold one item holds two."""

from lab import Scenario, acceptable, actor, forbidden


class CheckThenAct(Scenario):
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

    @actor
    def a(self) -> None:
        if not self.items:
            self.items.append("a")

    @actor
    def b(self) -> None:
        if not self.items:
            self.items.append("b")

    def observe(self) -> dict[str, list[str]]:
        return {"items": list(self.items)}
