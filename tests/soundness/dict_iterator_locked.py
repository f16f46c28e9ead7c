"""Correct twin of dict_iterator: making and advancing the iterator, and the insertion, run under one lab lock."""

from lab import Scenario, acceptable, actor, forbidden


class DictIteratorLocked(Scenario):
    source = "soundness suite: iter() over a shared dict, advanced on a later line"
    line_modules = (__name__,)
    outcomes = (
        acceptable("no overlap", a="DONE", b="DONE"),
        forbidden("dictionary changed size during iteration", a="ERROR"),
    )

    def setup(self) -> None:
        self.d = {"x": 1}
        self.seen = ""
        self.guard = self.lab.lock("guard")

    @actor
    def a(self) -> None:
        with self.guard:
            keys = iter(self.d)
            self.seen = next(keys)

    @actor
    def b(self) -> None:
        with self.guard:
            self.d["y"] = 2

    def observe(self) -> dict[str, str]:
        return {"seen": self.seen}
