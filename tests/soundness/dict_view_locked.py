"""Correct twin of dict_view: both lengths and the insertion run under one lab lock."""

from lab import Scenario, acceptable, actor, forbidden


class DictViewLocked(Scenario):
    source = "soundness suite: a dict view kept and used on a later line"
    line_modules = (__name__,)
    outcomes = (
        acceptable("the view and the dict agree", same=True),
        forbidden("b inserted between: the view and the dict disagree", same=False),
    )

    def setup(self) -> None:
        self.d = {"x": 1}
        self.same: bool | None = None
        self.guard = self.lab.lock("guard")

    @actor
    def a(self) -> None:
        keys = self.d.keys()
        with self.guard:
            n = len(self.d)
            m = len(keys)
        self.same = n == m

    @actor
    def b(self) -> None:
        with self.guard:
            self.d["y"] = 2

    def observe(self) -> dict[str, object]:
        return {"same": self.same}
