"""Racy: one actor appends to a list inside a list, the other sorts the outer list with ``sorted``.

``sorted`` compares the elements, so it reads the inner lists: ``[[1], [1, 0]]`` sorts differently from
``[[1], [1]]`` (a stable sort keeps equal elements in place).
"""

from lab import Scenario, acceptable, actor, forbidden


class SortedNested(Scenario):
    source = "soundness suite: a built-in that compares elements"
    line_modules = (__name__,)
    outcomes = (
        acceptable("sorted after the append", first=0),
        forbidden("sorted before the append", first=1),
    )

    def setup(self) -> None:
        self.rows: list[list[int]] = [[1, 5], [1]]
        self.first = -1

    @actor
    def a(self) -> None:
        self.rows[1].append(9)

    @actor
    def b(self) -> None:
        ordered = sorted(self.rows)
        self.first = 0 if ordered[0] is self.rows[0] else 1

    def observe(self) -> dict[str, object]:
        return {"first": self.first}
