"""reorder_3_bad (SCTBench CS, from the Inspect/CHESS benchmarks): 2 setters and 1 checker, 3 threads.

Each setter writes ``a = 1`` then ``b = -1``; the checker reads ``a`` then ``b`` and asserts it saw both
writes or neither. Uncertain: the split of the original's thread count into setters and checkers
(here 2 + 1).
"""

from __future__ import annotations

from collections.abc import Callable

BUGGY = True
THREADS = 3
SETTERS = 2
CHECKERS = 1


class State:
    def __init__(self) -> None:
        self.a = 0
        self.b = 0


def setup(lab: object) -> State:
    return State()


def setter(s: State) -> None:
    s.a = 1
    s.b = -1


def checker(s: State) -> None:
    a = s.a
    b = s.b
    if not ((a == 0 and b == 0) or (a == 1 and b == -1)):
        raise AssertionError(f"saw a={a}, b={b}")


ACTORS: dict[str, Callable[[State], object]] = {
    **{f"t{i + 1}": setter for i in range(SETTERS)},
    **{f"t{SETTERS + i + 1}": checker for i in range(CHECKERS)},
}


def check(s: State) -> dict[str, bool]:
    return {}
