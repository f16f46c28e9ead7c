"""Racy: one actor picks the best key with ``max(..., key=self.score.get)`` while the other rewrites the scores.

``max`` reads the dict only through the bound ``get`` it is handed as its key; the rewrite of both scores keeps
"y" the best before and after, but between the two stores "x" leads.
"""

from lab import Scenario, acceptable, actor, forbidden


class KeyBoundMethod(Scenario):
    source = "soundness suite: a bound method passed as a key"
    line_modules = (__name__,)
    outcomes = (
        acceptable("y is the best, before or after the rewrite", best="y"),
        forbidden("x looked best between the two stores", best="x"),
    )

    def setup(self) -> None:
        self.score = {"x": 1, "y": 2}
        self.best = ""

    @actor
    def a(self) -> None:
        self.best = max(["x", "y"], key=self.score.get)

    @actor
    def b(self) -> None:
        self.score["x"] = 5
        self.score["y"] = 9

    def observe(self) -> dict[str, str]:
        return {"best": self.best}
