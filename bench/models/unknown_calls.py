"""Two workers that call code the lab does not rewrite, each under one lab lock: a C function handed nested state
(``heapq.heappush``), the standard library's Python code (``textwrap.shorten``), a subscript through a
``collections.ChainMap`` and ``json.dumps`` (a table entry). Used by ``bench/bench_charging.py`` to measure what
charging such calls costs per execution; not a lesson of its own.
"""

import collections
import heapq
import json
import textwrap

from lab import Scenario, acceptable, actor


class Shelf:
    """What the workers share: a heap of pairs, a map behind a ChainMap, and a text."""

    def __init__(self) -> None:
        self.heap: list[tuple[int, list[int]]] = []
        self.base: dict[str, list[int]] = {"a": [1, 2], "b": [3]}
        self.view = collections.ChainMap(self.base)
        self.text = "the lab charges what unknown code can reach, " * 3


class UnknownCalls(Scenario):
    source = "bench: calls into code the lab does not rewrite"
    outcomes = (acceptable("both workers filed their items", filed=6),)

    def setup(self) -> None:
        self.shelf = Shelf()
        self.guard = self.lab.lock("guard")

    def _work(self, first: int) -> None:
        for i in range(first, first + 3):
            with self.guard:
                heapq.heappush(self.shelf.heap, (i, [i]))
                self.shelf.view[f"k{i}"] = [i]
                textwrap.shorten(self.shelf.text, 40)
                json.dumps(self.shelf.base)

    @actor
    def a(self) -> None:
        self._work(0)

    @actor
    def b(self) -> None:
        self._work(10)

    def observe(self) -> dict[str, int]:
        return {"filed": len(self.shelf.heap)}
