"""Primitives made at import, before any run: a module's lock, a class's lock, a set event, a semaphore, a queue
with items, a condition. Each correct use must explore to PASS, never HUNG; the racy twin must still FAIL."""

from __future__ import annotations

import queue
import threading

LOCK = threading.Lock()
RLOCK = threading.RLock()
READY = threading.Event()
READY.set()  # set at import: the twin starts set
SLOTS = threading.Semaphore(1)
JOBS: queue.Queue[int] = queue.Queue()
JOBS.put(5)
JOBS.put(7)
CHANGED = threading.Condition()


class Account:
    lock = threading.Lock()

    def __init__(self) -> None:
        self.balance = 0

    def deposit_module_lock(self, n: int) -> None:
        with LOCK:
            self._add(n)

    def deposit_class_lock(self, n: int) -> None:
        with self.lock:
            self._add(n)

    def deposit_rlock(self, n: int) -> None:
        with RLOCK, RLOCK:
            self._add(n)

    def deposit_when_ready(self, n: int) -> None:
        READY.wait()
        with SLOTS:
            self._add(n)

    def deposit_a_job(self) -> None:
        n = JOBS.get()
        with CHANGED:
            self._add(n)
            CHANGED.notify_all()

    def deposit_racy(self, n: int) -> None:
        self._add(n)

    def _add(self, n: int) -> None:
        current = self.balance
        self.balance = current + n
