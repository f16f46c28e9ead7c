"""Correct twin of aliased_attributes: both check-and-append steps run under one lab lock."""

from lab import Scenario, acceptable, actor, forbidden


class AliasedAttributesLocked(Scenario):
    source = "soundness suite: one list under two attribute names"
    line_modules = (__name__,)
    outcomes = (
        acceptable("the message was filed once", filed=1),
        forbidden("the message was filed twice: both checked before either appended", filed=2),
    )

    def setup(self) -> None:
        self.inbox: list[str] = []
        self.archive = self.inbox
        self.guard = self.lab.lock("guard")

    @actor
    def a(self) -> None:
        with self.guard:
            if "m1" not in self.inbox:
                self.inbox.append("m1")

    @actor
    def b(self) -> None:
        with self.guard:
            if "m1" not in self.archive:
                self.archive.append("m1")

    def observe(self) -> dict[str, int]:
        return {"filed": len(self.inbox)}
