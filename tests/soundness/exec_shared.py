"""Racy: a sets a flag, then ``exec`` runs code that appends to a shared list; b, seeing the flag, reads the list
before the append.

The executed code is not rewritten: ``exec`` writes everything reachable from the namespace it is handed.
"""

from lab import Scenario, acceptable, actor, forbidden


class ExecShared(Scenario):
    source = "soundness suite: ``exec`` of code that appends to a shared list"
    line_modules = (__name__,)
    outcomes = (
        forbidden("b saw the flag but not the act", b="0"),
        acceptable("b read before the flag, or after the act"),
    )

    def setup(self) -> None:
        self.sent = False
        self.items: list[int] = []

    @actor
    def a(self) -> None:
        self.sent = True
        exec("items.append(1)", {"items": self.items})

    @actor
    def b(self) -> str:
        if self.sent:
            return f"{len(self.items)!r}"
        return "early"
