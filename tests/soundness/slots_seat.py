"""Racy: two actors claim a seat (an object with ``__slots__``) if it is free; both believe they got it.

``owner`` is a slot of a nested object, written through ``self.seat.owner``.
"""

from lab import Scenario, acceptable, actor, forbidden


class _Seat:
    __slots__ = ("owner",)

    def __init__(self) -> None:
        self.owner = ""


class SlotsSeat(Scenario):
    source = "soundness suite: __slots__"
    line_modules = (__name__,)
    outcomes = (
        acceptable("a claimed the seat, b found it taken", a="CLAIMED", b="TAKEN", owner="a"),
        acceptable("b claimed the seat, a found it taken", a="TAKEN", b="CLAIMED", owner="b"),
        forbidden("both believe they hold the seat: both checked before either claimed", a="CLAIMED", b="CLAIMED"),
    )

    def setup(self) -> None:
        self.seat = _Seat()

    @actor
    def a(self) -> str:
        if self.seat.owner:
            return "TAKEN"
        self.seat.owner = "a"
        return "CLAIMED"

    @actor
    def b(self) -> str:
        if self.seat.owner:
            return "TAKEN"
        self.seat.owner = "b"
        return "CLAIMED"

    def observe(self) -> dict[str, str]:
        return {"owner": self.seat.owner}
