"""Racy: two resources count their closing in __del__, a read and a write of one total; an update is lost.

Each actor drops one resource, so its ``__del__`` runs in that actor's step: two finalizers on two threads read the
same total. Anything of the lab's that kept the resources alive would run neither in the run.
"""

from lab import Scenario, acceptable, actor, forbidden


class Closing:
    """Counts, from ``__del__``, that it was closed."""

    def __init__(self, board: "Board") -> None:
        self.board = board

    def __del__(self) -> None:
        board = self.board
        n = board.closed
        board.closed = n + 1


class Board:
    def __init__(self) -> None:
        self.closed = 0


class FinalizerCount(Scenario):
    source = "soundness suite: __del__"
    line_modules = (__name__,)
    outcomes = (
        acceptable("both closes counted", closed=2),
        forbidden("a close was lost", closed=1),
    )

    def setup(self) -> None:
        self.board = Board()
        self.first: Closing | None = Closing(self.board)
        self.second: Closing | None = Closing(self.board)

    @actor
    def a(self) -> None:
        self.first = None

    @actor
    def b(self) -> None:
        self.second = None

    def observe(self) -> dict[str, int]:
        return {"closed": self.board.closed}
