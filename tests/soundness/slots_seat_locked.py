"""Correct twin of slots_seat: the check and the claim of the seat run under one lab lock."""

from lab import Scenario, acceptable, actor, forbidden


class _Seat:
    __slots__ = ("owner",)

    def __init__(self) -> None:
        self.owner = ""


class SlotsSeatLocked(Scenario):
    source = "soundness suite: __slots__"
    line_modules = (__name__,)
    outcomes = (
        acceptable("a claimed the seat, b found it taken", a="CLAIMED", b="TAKEN", owner="a"),
        acceptable("b claimed the seat, a found it taken", a="TAKEN", b="CLAIMED", owner="b"),
        forbidden("both believe they hold the seat: both checked before either claimed", a="CLAIMED", b="CLAIMED"),
    )

    def setup(self) -> None:
        self.seat = _Seat()
        self.guard = self.lab.lock("guard")

    @actor
    def a(self) -> str:
        with self.guard:
            if self.seat.owner:
                return "TAKEN"
            self.seat.owner = "a"
            return "CLAIMED"

    @actor
    def b(self) -> str:
        with self.guard:
            if self.seat.owner:
                return "TAKEN"
            self.seat.owner = "b"
            return "CLAIMED"

    def observe(self) -> dict[str, str]:
        return {"owner": self.seat.owner}
