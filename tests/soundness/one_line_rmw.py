"""Racy: two actors count a vote with the one-liner ``d[k] = d.get(k, 0) + 1``; a vote is lost.

The read and the write are on one line, so no line boundary falls between them: only a scheduling point at each
access (instruction granularity) can split them. A coarser granularity must not call this program correct.
"""

from lab import Scenario, acceptable, actor, forbidden


class OneLineRmw(Scenario):
    source = "soundness suite: a one-line read-modify-write"
    line_modules = (__name__,)
    outcomes = (
        acceptable("both votes counted", yes=2),
        forbidden("a vote was lost: both read 0 before either wrote", yes=1),
    )

    def setup(self) -> None:
        self.votes: dict[str, int] = {}

    @actor
    def a(self) -> None:
        self.votes["yes"] = self.votes.get("yes", 0) + 1

    @actor
    def b(self) -> None:
        self.votes["yes"] = self.votes.get("yes", 0) + 1

    def observe(self) -> dict[str, int]:
        return {"yes": self.votes["yes"]}
