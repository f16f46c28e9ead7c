"""Racy: one actor appends to a list inside a list, the other compares the outer list with ``==``.

Comparing lists compares their elements: ``self.grid == [[]]`` reads the inner list too, so it races with the
append to ``self.grid[0]`` even though nothing writes ``self.grid`` itself.
"""

from lab import Scenario, acceptable, actor, forbidden


class NestedCompare(Scenario):
    source = "soundness suite: a compare of nested lists"
    line_modules = (__name__,)
    outcomes = (
        acceptable("compared after the append", same=False),
        forbidden("compared before the append", same=True),
    )

    def setup(self) -> None:
        self.grid: list[list[int]] = [[]]
        self.same: bool | None = None

    @actor
    def a(self) -> None:
        self.grid[0].append(1)

    @actor
    def b(self) -> None:
        self.same = self.grid == [[]]

    def observe(self) -> dict[str, object]:
        return {"same": self.same}
