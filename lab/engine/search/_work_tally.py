"""The tally of a parallel exploration: the work items as they come in, and their runs counted in the search's order.

Each item's runs arrive in its own search's order, with a marker where it took a child's result. The tally walks the
items in that order, descending into a child at its marker, and counts each run as soon as its place is known: the
one-process order, so counts, examples, the first failure, the digests the caller adopts and every progress report
are the one-process ones, whenever and wherever the runs were made.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from lab.engine.search._exploration import Exploration
from lab.engine.search._explorer import Explorer
from lab.engine.search._work_items import Ran, Result, take


@dataclass
class Item:
    """A work item as the coordinator follows it: where it hangs, its runs and children's markers as they came."""

    name: str
    parent: str | None
    text: str | None  # its inputs (None: the whole tree)
    depth: int
    entries: list[tuple[str, Any]] = field(default_factory=list)  # ("run", Ran) or ("sub", child)
    children: list[str] = field(default_factory=list)
    result: Result | None = None
    dead: bool = False  # its inputs changed, or its branch was dropped: nothing of it counts


class Tally:
    """The items of one exploration (``"r"`` is the whole tree) and the exploration their runs add up to so far."""

    def __init__(self, explorer: Explorer) -> None:
        self._explorer = explorer
        self.items: dict[str, Item] = {"r": Item("r", None, None, -1)}
        self._cursor: list[tuple[str, int]] = [("r", 0)]
        self.found = Exploration()
        self.reported = 0

    @property
    def complete(self) -> bool:
        """Whether every run of the whole tree is counted."""
        return not self._cursor

    def advance(self) -> bool:
        """Tally every run whose place in the search's order is now known; False once the budget is reached."""
        explorer, found = self._explorer, self.found
        while self._cursor:
            ident, index = self._cursor[-1]
            item = self.items[ident]
            if index < len(item.entries):
                self._cursor[-1] = (ident, index + 1)
                kind, entry = item.entries[index]
                if kind == "sub":
                    self._cursor.append((entry, 0))
                    continue
                take(explorer, found, entry)
                self.reported += 1
                if found.executions_run >= explorer.max_schedules:
                    return False
            elif item.result is not None:
                self._cursor.pop()
                found.bounded = found.bounded or item.result.bounded
            else:
                return True
        return True

    def finished(self) -> dict[str, Result]:
        """Every work item the workers finished (not the whole tree), by its inputs, with its runs in order."""
        results: dict[str, Result] = {}
        for item in self.items.values():
            if item.text is not None and item.result is not None and not item.dead:
                result = item.result
                results[item.text] = Result(item.text, result.outside, result.first, result.bounded, self._runs(item))
        return results

    def _runs(self, item: Item) -> list[Ran]:
        runs: list[Ran] = []
        for kind, entry in item.entries:
            runs.extend(self._runs(self.items[entry]) if kind == "sub" else [entry])
        return runs
