"""Race: a correct session built on a plain threading.Lock, with time.sleep for the model, explores to PASS.

Article 003's rule, commit only on the version you began with, written the way most code is written: a
`threading.Lock()` guards `begin` and `commit`, and `time.sleep` stands in for the model's latency. Nothing is
injected. While the lab runs a scenario, the standard library's locks, conditions, events, queues and sleeps are
scheduling points it can see (docs/writing-scenarios.md, "Standard primitives"): the lock shows in the trace as
`Lock#1` (the first lock made during setup), and each sleep returns at once and advances a virtual clock. The
explorer runs every schedule that matters. Either both began on one version and the first commit wins (the other is
STALE), or one began after the other had committed and both commit. Two commits on one version never happen.
"""

import threading
import time

from lab import Scenario, acceptable, actor, forbidden


class PlainLockSession:
    """A minimal versioned history of question/answer pairs, guarded by a standard lock."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.version = 0
        self.history: list[str] = []

    def begin(self) -> int:
        with self._lock:
            return self.version

    def commit(self, version: int, question: str, answer: str) -> str:
        with self._lock:
            if version != self.version:
                return "STALE"
            self.history = [*self.history, question, answer]
            self.version += 1
            return "COMMITTED"


class StdlibLockSession(Scenario):
    source = "article 003, sections 1-2"
    outcomes = (
        acceptable(
            "both began on version 0; slow committed first, fast is STALE",
            slow="COMMITTED",
            fast="STALE",
            began="same",
            version=1,
        ),
        acceptable(
            "both began on version 0; fast committed first, slow is STALE",
            slow="STALE",
            fast="COMMITTED",
            began="same",
            version=1,
        ),
        acceptable(
            "one began after the other had committed: each answer joins the history it was built on",
            slow="COMMITTED",
            fast="COMMITTED",
            began="different",
            version=2,
        ),
        forbidden(
            "two answers built on the same version were both committed",
            slow="COMMITTED",
            fast="COMMITTED",
            began="same",
        ),
    )

    def setup(self) -> None:
        self.session = PlainLockSession()
        self.began: dict[str, int] = {}

    def _request(self, who: str, thinking_seconds: float) -> str:
        version = self.session.begin()
        self.began[who] = version
        time.sleep(thinking_seconds)  # the model thinks: virtual time, no real waiting
        return self.session.commit(version, f"{who} question", f"{who} answer")

    @actor
    def slow(self) -> str:
        return self._request("slow", 2.0)

    @actor
    def fast(self) -> str:
        return self._request("fast", 0.5)

    def observe(self) -> dict[str, object]:
        same = len(set(self.began.values())) == 1
        return {"version": self.session.version, "began": "same" if same else "different"}

    def invariants(self):
        history = self.session.history
        yield (
            "history is whole question/answer pairs",
            all(
                question.endswith(" question") and answer == question.replace("question", "answer")
                for question, answer in zip(history[::2], history[1::2], strict=True)
            ),
        )
        yield "one pair per committed version", len(history) == 2 * self.session.version
