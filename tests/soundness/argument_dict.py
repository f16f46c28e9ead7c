"""Racy: a function closes a file in a table passed to it as an argument, if open; two closers, one KeyError.

The table is a dict handed over as an argument: inside ``_close`` it is a local name, not an attribute.
"""

from lab import Scenario, acceptable, actor, forbidden


def _close(table: dict[str, str], name: str) -> None:
    if name in table:
        del table[name]  # noqa: RUF051 -- the check and the delete are two steps: that is the race


class ArgumentDict(Scenario):
    source = "soundness suite: a dict passed as an argument"
    line_modules = (__name__,)
    outcomes = (
        acceptable("the file was closed once", a="DONE", b="DONE", open=0),
        forbidden("a closes what the other already closed: KeyError", a="ERROR"),
        forbidden("a closes what the other already closed: KeyError", b="ERROR"),
    )

    def setup(self) -> None:
        self.files = {"log": "open"}

    @actor
    def a(self) -> None:
        _close(self.files, "log")

    @actor
    def b(self) -> None:
        _close(self.files, "log")

    def observe(self) -> dict[str, int]:
        return {"open": len(self.files)}
