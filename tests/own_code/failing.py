"""Small programs of a user's own that go wrong in ways no check names: they raise, or they deadlock.

The tests in ``tests/test_default_verdicts.py`` explore them with every argument left at its default, which must
fail on each (an exception or a deadlock is never a silent PASS).
"""

from __future__ import annotations

import threading


class CheckedAccount:
    """Withdrawals that check the balance first, outside the lock, then assert it never went negative."""

    def __init__(self) -> None:
        self.balance = 1
        self.lock = threading.Lock()

    def withdraw(self) -> None:
        if self.balance >= 1:
            with self.lock:
                self.balance -= 1
                if self.balance < 0:
                    raise AssertionError(f"balance {self.balance}")


class TwoLocks:
    """Two transfers that take the same two locks in opposite orders: some schedule deadlocks."""

    def __init__(self) -> None:
        self.a = threading.Lock()
        self.b = threading.Lock()
        self.moved = 0

    def forward(self) -> None:
        with self.a, self.b:
            self.moved += 1

    def backward(self) -> None:
        with self.b, self.a:
            self.moved += 1


class Ordered(TwoLocks):
    """The same locks, taken in one order by every transfer (only ``forward`` is used): correct, so the default
    verdict is PASS."""
