"""token_ring_bad (SCTBench CS, from ESBMC): four threads pass a token around a ring of variables.

Uncertain port, faithful in spirit: thread 1 emits the token into ``x1``, each next thread copies its
predecessor's slot into its own (a read and a write), with no synchronisation; the final check asserts the token
went all the way round (``x4 == x1``), which fails whenever a thread copies before its predecessor wrote.
"""

from __future__ import annotations

from collections.abc import Callable

BUGGY = True
THREADS = 4


class State:
    def __init__(self) -> None:
        self.x = [0, 0, 0, 0]


def setup(lab: object) -> State:
    return State()


def emit(s: State) -> None:
    s.x[0] = 1


def _pass_on(i: int) -> Callable[[State], object]:
    def copy(s: State) -> None:
        token = s.x[i - 1]
        s.x[i] = token

    return copy


ACTORS: dict[str, Callable[[State], object]] = {"t1": emit, "t2": _pass_on(1), "t3": _pass_on(2), "t4": _pass_on(3)}


def check(s: State) -> dict[str, bool]:
    return {"the token went round": s.x[3] == s.x[0]}
