"""Correct twin of one_line_rmw: the one-line read-modify-write runs under one lab lock."""

from lab import Scenario, acceptable, actor, forbidden


class OneLineRmwLocked(Scenario):
    source = "soundness suite: a one-line read-modify-write"
    line_modules = (__name__,)
    outcomes = (
        acceptable("both votes counted", yes=2),
        forbidden("a vote was lost: both read 0 before either wrote", yes=1),
    )

    def setup(self) -> None:
        self.votes: dict[str, int] = {}
        self.guard = self.lab.lock("guard")

    @actor
    def a(self) -> None:
        with self.guard:
            self.votes["yes"] = self.votes.get("yes", 0) + 1

    @actor
    def b(self) -> None:
        with self.guard:
            self.votes["yes"] = self.votes.get("yes", 0) + 1

    def observe(self) -> dict[str, int]:
        return {"yes": self.votes["yes"]}
