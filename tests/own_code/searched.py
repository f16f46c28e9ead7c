"""Small programs the search strategies are checked on against naive enumeration (``tests/test_search.py``)."""

from __future__ import annotations

import threading


class Counter:
    """A lost update: read, then write what was read plus one."""

    def __init__(self) -> None:
        self.n = 0

    def bump(self) -> int:
        seen = self.n
        self.n = seen + 1
        return seen


class LockedCounter(Counter):
    """The same, under a lock: every schedule counts every bump."""

    def __init__(self) -> None:
        super().__init__()
        self.lock = threading.Lock()

    def bump(self) -> int:
        with self.lock:
            seen = self.n
            self.n = seen + 1
        return seen


class Flags:
    """Setters write two fields in order; a checker reading both in between sees them half written."""

    def __init__(self) -> None:
        self.a = 0
        self.b = 0

    def set(self) -> None:
        self.a = 1
        self.b = -1

    def check(self) -> None:
        a = self.a
        b = self.b
        if (a, b) not in ((0, 0), (1, -1)):
            raise AssertionError(f"half written: a={a} b={b}")
