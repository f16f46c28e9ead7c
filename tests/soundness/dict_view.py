"""Racy: a keeps a shared dict's keys view and compares its length with the dict's; b inserts a key between.

A view reads its dict each time it is used, not when it is made: the insertion can fall between the two lengths.
"""

from lab import Scenario, acceptable, actor, forbidden


class DictView(Scenario):
    source = "soundness suite: a dict view kept and used on a later line"
    line_modules = (__name__,)
    outcomes = (
        acceptable("the view and the dict agree", same=True),
        forbidden("b inserted between: the view and the dict disagree", same=False),
    )

    def setup(self) -> None:
        self.d = {"x": 1}
        self.same: bool | None = None

    @actor
    def a(self) -> None:
        keys = self.d.keys()
        n = len(self.d)
        m = len(keys)
        self.same = n == m

    @actor
    def b(self) -> None:
        self.d["y"] = 2

    def observe(self) -> dict[str, object]:
        return {"same": self.same}
