"""Racy: ``self.inbox`` and ``self.archive`` are one list; each actor checks and appends through its own name.

Two attribute names, one object: what conflicts is the list, not the names that reach it.
"""

from lab import Scenario, acceptable, actor, forbidden


class AliasedAttributes(Scenario):
    source = "soundness suite: one list under two attribute names"
    line_modules = (__name__,)
    outcomes = (
        acceptable("the message was filed once", filed=1),
        forbidden("the message was filed twice: both checked before either appended", filed=2),
    )

    def setup(self) -> None:
        self.inbox: list[str] = []
        self.archive = self.inbox

    @actor
    def a(self) -> None:
        if "m1" not in self.inbox:
            self.inbox.append("m1")

    @actor
    def b(self) -> None:
        if "m1" not in self.archive:
            self.archive.append("m1")

    def observe(self) -> dict[str, int]:
        return {"filed": len(self.inbox)}
