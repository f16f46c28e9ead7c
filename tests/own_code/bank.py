"""A learner's own class, outside scenarios/: an account whose deposit reads the balance, then writes it."""

from __future__ import annotations

import threading


class Account:
    """Racy: two deposits can both read the old balance, and one of them is lost."""

    def __init__(self) -> None:
        self.balance = 0

    def deposit(self, amount: int) -> None:
        seen = self.balance
        self.balance = seen + amount


class SafeAccount(Account):
    """The fixed twin: the read and the write under one (standard library) lock."""

    def __init__(self) -> None:
        super().__init__()
        self._lock = threading.Lock()

    def deposit(self, amount: int) -> None:
        with self._lock:
            seen = self.balance
            self.balance = seen + amount
