"""The check-then-act model of :mod:`bench.models.check_then_act` with a plain ``threading.Lock``.

The same stores, built on the lock a user writes (``threading.Lock()``, which the lab replaces with its stand-in
while the scenario runs) instead of the lab's own ``self.lab.lock(...)``. The lab models both with one lock, so
both explore in the same number of executions: ``bench/bench_locks.py`` prints the two side by side.
"""

import threading

from lab import Scenario, acceptable, actor, forbidden


class CheckedStore:
    """The version check and the write happen under one lock."""

    def __init__(self) -> None:
        self.version = 0
        self.commits: list[int] = []  # the version each commit was built on
        self._lock = threading.Lock()

    def commit_if(self, seen: int, who: str) -> bool:
        with self._lock:
            if self.version != seen:
                return False
            self.commits.append(seen)
            self.version = seen + 1
            return True


class RacyStore(CheckedStore):
    """The check is done outside the lock: two workers can both pass it."""

    def commit_if(self, seen: int, who: str) -> bool:
        if self.version != seen:
            return False
        with self._lock:
            self.commits.append(seen)
            self.version = seen + 1
        return True


class CheckThenActThreading(Scenario):
    source = "the classic check-then-act race, on a plain threading.Lock"
    variants = {"CheckedStore": CheckedStore, "RacyStore": RacyStore}  # noqa: RUF012 (a lesson-style literal)
    outcomes = (
        acceptable("every commit was built on the version it replaced", lost_update=False),
        forbidden("both committed on the same version: a lost update", lost_update=True),
    )

    def setup(self) -> None:
        self.store = self.variant()

    @actor
    def a(self) -> bool:
        return self.store.commit_if(self.store.version, "a")

    @actor
    def b(self) -> bool:
        return self.store.commit_if(self.store.version, "b")

    def c(self) -> bool:
        return self.store.commit_if(self.store.version, "c")

    def d(self) -> bool:
        return self.store.commit_if(self.store.version, "d")

    def observe(self) -> dict[str, object]:
        commits = self.store.commits
        return {"commits": len(commits), "lost_update": len(commits) != len(set(commits))}
