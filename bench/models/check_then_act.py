"""The classic check-then-act model: two workers read the version, then commit if it is unchanged.

Each worker reads ``store.version``, builds its answer, and commits only if the version it read is still current;
a commit bumps the version. With the check and the write under one lock (``CheckedStore``, the correct variant)
exactly one worker commits; without it (``RacyStore``) both can read version 0, both see it unchanged, and both
commit: a lost update. Used by ``bench/bench_reduction.py``; not a lesson of its own.
"""

from lab import Scenario, acceptable, actor, forbidden


class CheckedStore:
    """The version check and the write happen under one lock."""

    def __init__(self, lock: object) -> None:
        self.version = 0
        self.commits: list[int] = []  # the version each commit was built on
        self._lock = lock

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


class CheckThenAct(Scenario):
    source = "the classic check-then-act race (read the version, commit if unchanged)"
    variants = {"CheckedStore": CheckedStore, "RacyStore": RacyStore}  # noqa: RUF012 (a lesson-style literal)
    outcomes = (
        acceptable("every commit was built on the version it replaced", lost_update=False),
        forbidden("both committed on the same version: a lost update", lost_update=True),
    )

    def setup(self) -> None:
        self.store = self.variant(self.lab.lock("store.lock"))

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
