"""account (fixed; SCTBench CS account_bad with the checker's formula corrected to ``x + y - z``).

A deposit, a withdrawal and a checker, each under one mutex: correct in every schedule.
"""

from __future__ import annotations

import threading
from collections.abc import Callable

BUGGY = False
THREADS = 3


class State:
    def __init__(self) -> None:
        self.m = threading.Lock()
        self.x = 1
        self.y = 2
        self.z = 4
        self.balance = self.x
        self.deposit_done = False
        self.withdraw_done = False


def setup(lab: object) -> State:
    return State()


def deposit(s: State) -> None:
    with s.m:
        s.balance = s.balance + s.y
        s.deposit_done = True


def withdraw(s: State) -> None:
    with s.m:
        s.balance = s.balance - s.z
        s.withdraw_done = True


def check_result(s: State) -> None:
    with s.m:
        if s.deposit_done and s.withdraw_done and s.balance != (s.x + s.y) - s.z:
            raise AssertionError(f"balance {s.balance} != (x + y) - z")


ACTORS: dict[str, Callable[[State], object]] = {"t1": check_result, "t2": deposit, "t3": withdraw}


def check(s: State) -> dict[str, bool]:
    return {"balance is x + y - z": s.balance == (s.x + s.y) - s.z}
