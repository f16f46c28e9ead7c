"""Racy: a takes an iterator over a shared dict, then its first key on the next line; b inserts a key between.

The iterator reads the dict when advanced, not when made: between the two, an insertion breaks it (RuntimeError).
"""

from lab import Scenario, acceptable, actor, forbidden


class DictIterator(Scenario):
    source = "soundness suite: iter() over a shared dict, advanced on a later line"
    line_modules = (__name__,)
    outcomes = (
        acceptable("no overlap", a="DONE", b="DONE"),
        forbidden("dictionary changed size during iteration", a="ERROR"),
    )

    def setup(self) -> None:
        self.d = {"x": 1}
        self.seen = ""

    @actor
    def a(self) -> None:
        keys = iter(self.d)
        self.seen = next(keys)

    @actor
    def b(self) -> None:
        self.d["y"] = 2

    def observe(self) -> dict[str, str]:
        return {"seen": self.seen}
