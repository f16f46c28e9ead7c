"""Correct twin of key_bound_method: the pick and the rewrite of both scores run under one lab lock."""

from lab import Scenario, acceptable, actor, forbidden


class KeyBoundMethodLocked(Scenario):
    source = "soundness suite: a bound method passed as a key"
    line_modules = (__name__,)
    outcomes = (
        acceptable("y is the best, before or after the rewrite", best="y"),
        forbidden("x looked best between the two stores", best="x"),
    )

    def setup(self) -> None:
        self.score = {"x": 1, "y": 2}
        self.best = ""
        self.guard = self.lab.lock("guard")

    @actor
    def a(self) -> None:
        with self.guard:
            self.best = max(["x", "y"], key=self.score.get)

    @actor
    def b(self) -> None:
        with self.guard:
            self.score["x"] = 5
            self.score["y"] = 9

    def observe(self) -> dict[str, str]:
        return {"best": self.best}
