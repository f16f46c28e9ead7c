"""VersionedSession: article 003's begin/commit rules."""

from __future__ import annotations

import dataclasses
import random
import threading
import time

import pytest

from lab.errors import UsageError
from lab.messages import Message, Role, is_whole_pairs
from lab.sessions.versioned import CommitStatus, Ticket, VersionedSession


def _state(session: VersionedSession) -> tuple[int, tuple[Message, ...], tuple[str, ...]]:
    version, history = session.snapshot()
    return version, history, session.receipt_ids


class TestOutcomeTable:
    def test_out_of_order_commit(self) -> None:
        """Both begin at v0; the fast one commits, the slow one is STALE; history holds only the fast pair."""
        session = VersionedSession("s1")
        slow = session.begin("r-slow", "slow question")
        fast = session.begin("r-fast", "fast question")
        assert session.commit(fast, "new answer", "stop") is CommitStatus.COMMITTED
        assert session.commit(slow, "old answer", "stop") is CommitStatus.STALE
        assert session.snapshot() == (1, (Message(Role.USER, "fast question"), Message(Role.ASSISTANT, "new answer")))

    def test_duplicate(self) -> None:
        """The same ticket with the same answer again is DUPLICATE, not STALE."""
        session = VersionedSession("s1")
        ticket = session.begin("r1", "q")
        assert session.commit(ticket, "a", "stop") is CommitStatus.COMMITTED
        assert session.commit(ticket, "a", "stop") is CommitStatus.DUPLICATE

    @pytest.mark.parametrize(("question", "answer"), [("q", "other answer"), ("other question", "a")])
    def test_id_conflict(self, question: str, answer: str) -> None:
        """The same request id with another question or answer is ID_CONFLICT."""
        session = VersionedSession("s1")
        assert session.commit(session.begin("r1", "q"), "a", "stop") is CommitStatus.COMMITTED
        reused = Ticket("s1", 1, "r1", question, session.snapshot()[1])
        assert session.commit(reused, answer, "stop") is CommitStatus.ID_CONFLICT

    @pytest.mark.parametrize(
        ("answer", "finish_reason"),
        [("", "stop"), ("   ", "stop"), (None, "stop"), ("a", "length"), ("a", None), ("a", "content_filter")],
    )
    def test_invalid(self, answer: str | None, finish_reason: str | None) -> None:
        """A blank answer or a finish reason other than stop is INVALID."""
        session = VersionedSession("s1")
        assert session.commit(session.begin("r1", "q"), answer, finish_reason) is CommitStatus.INVALID

    def test_foreign_ticket_with_equal_version(self) -> None:
        """A ticket of another session is FOREIGN even when the version numbers are equal."""
        one, two = VersionedSession("s1"), VersionedSession("s2")
        ticket = one.begin("r1", "q")
        assert ticket.version == two.version == 0
        assert two.commit(ticket, "a", "stop") is CommitStatus.FOREIGN
        assert two.version == 0

    def test_committed(self) -> None:
        """A valid reply on the current version appends the pair, bumps the version and stores a receipt."""
        session = VersionedSession("s1")
        assert session.commit(session.begin("r1", "q"), "a", "stop") is CommitStatus.COMMITTED
        assert _state(session) == (1, (Message("user", "q"), Message("assistant", "a")), ("r1",))


class TestPrecedence:
    def test_foreign_before_invalid(self) -> None:
        """A foreign ticket with an invalid reply is FOREIGN."""
        one, two = VersionedSession("s1"), VersionedSession("s2")
        assert two.commit(one.begin("r", "q"), "", "length") is CommitStatus.FOREIGN

    def test_invalid_before_duplicate(self) -> None:
        """An invalid reply on a committed request id is INVALID, not DUPLICATE."""
        session = VersionedSession("s1")
        ticket = session.begin("r1", "q")
        session.commit(ticket, "a", "stop")
        assert session.commit(ticket, "a", "length") is CommitStatus.INVALID

    def test_receipt_before_version(self) -> None:
        """A committed ticket re-sent after later commits is DUPLICATE, not STALE."""
        session = VersionedSession("s1")
        ticket = session.begin("r1", "q")
        session.commit(ticket, "a", "stop")
        session.commit(session.begin("r2", "q2"), "a2", "stop")
        assert session.commit(ticket, "a", "stop") is CommitStatus.DUPLICATE

    def test_stale_conflicting_id_is_id_conflict(self) -> None:
        """An old ticket reusing a committed id with another answer is ID_CONFLICT, not STALE."""
        session = VersionedSession("s1")
        ticket = session.begin("r1", "q")
        session.commit(session.begin("r1", "q"), "first", "stop")
        assert session.commit(ticket, "second", "stop") is CommitStatus.ID_CONFLICT


class TestNothingChangesUnlessCommitted:
    @pytest.mark.parametrize("case", ["stale", "duplicate", "id_conflict", "invalid", "foreign"])
    def test_non_committed_leaves_state(self, case: str) -> None:
        """Every non-COMMITTED status leaves version, history and receipts unchanged."""
        session = VersionedSession("s1")
        old = session.begin("r-old", "old")
        first = session.begin("r1", "q1")
        session.commit(first, "a1", "stop")
        before = _state(session)
        status = {
            "stale": lambda: session.commit(old, "x", "stop"),
            "duplicate": lambda: session.commit(first, "a1", "stop"),
            "id_conflict": lambda: session.commit(first, "other", "stop"),
            "invalid": lambda: session.commit(session.begin("r2", "q2"), "", "stop"),
            "foreign": lambda: session.commit(VersionedSession("s2").begin("r3", "q"), "a", "stop"),
        }[case]()
        assert status.value == case.upper()
        assert _state(session) == before


class TestTrimmingAndReceipts:
    def test_whole_round_trimming(self) -> None:
        """With max_rounds=2 the oldest whole pair is dropped; no answer is left without its question."""
        session = VersionedSession("s1")
        for i in range(1, 4):
            session.commit(session.begin(f"r{i}", f"q{i}"), f"a{i}", "stop")
        version, history = session.snapshot()
        assert version == 3
        assert [m.content for m in history] == ["q2", "a2", "q3", "a3"]
        assert is_whole_pairs(history)

    def test_receipt_eviction_turns_duplicate_into_stale(self) -> None:
        """Once its receipt is evicted, re-committing an old ticket is STALE, no longer DUPLICATE."""
        session = VersionedSession("s1", receipt_capacity=2)
        first = session.begin("r1", "q1")
        session.commit(first, "a1", "stop")
        session.commit(session.begin("r2", "q2"), "a2", "stop")
        assert session.commit(first, "a1", "stop") is CommitStatus.DUPLICATE
        session.commit(session.begin("r3", "q3"), "a3", "stop")
        assert session.receipt_ids == ("r2", "r3")
        assert session.commit(first, "a1", "stop") is CommitStatus.STALE


class TestImmutability:
    def test_ticket_is_frozen_and_isolated(self) -> None:
        """A ticket cannot be changed and its history does not follow later commits."""
        session = VersionedSession("s1")
        session.commit(session.begin("r1", "q1"), "a1", "stop")
        ticket = session.begin("r2", "q2")
        with pytest.raises(dataclasses.FrozenInstanceError):
            ticket.version = 5  # type: ignore[misc]
        assert isinstance(ticket.history, tuple)
        session.commit(ticket, "a2", "stop")
        session.commit(session.begin("r3", "q3"), "a3", "stop")
        assert [m.content for m in ticket.history] == ["q1", "a1"]

    def test_blank_ids_are_refused(self) -> None:
        """begin refuses a blank request id or question with a clear error."""
        session = VersionedSession("s1")
        with pytest.raises(UsageError, match="request_id"):
            session.begin(" ", "q")
        with pytest.raises(UsageError, match="question"):
            session.begin("r", "")

    def test_probe_points(self) -> None:
        """commit calls its probe at enter, after the checks and before the write."""
        points: list[str] = []
        session = VersionedSession("s1", probe=points.append)
        session.commit(session.begin("r", "q"), "a", "stop")
        assert points == ["begin:enter", "commit:enter", "commit:checked", "commit:write"]


class TestStress:
    @pytest.mark.timeout(30)
    def test_free_running_threads(self) -> None:
        """8 threads x 500 begin/commit: version == COMMITTED count, whole pairs always, no answer twice."""
        session = VersionedSession("s1", max_rounds=1_000_000, receipt_capacity=1_000_000)
        results: list[CommitStatus] = []
        whole = [True]
        guard = threading.Lock()

        def worker(n: int) -> None:
            rng = random.Random(n)
            for i in range(500):
                ticket = session.begin(f"t{n}-{i}", f"q{n}-{i}")
                if rng.random() < 0.5:
                    time.sleep(0)
                status = session.commit(ticket, f"a{n}-{i}", "stop")
                if not is_whole_pairs(session.snapshot()[1]):
                    whole[0] = False
                with guard:
                    results.append(status)

        threads = [threading.Thread(target=worker, args=(n,)) for n in range(8)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        committed = results.count(CommitStatus.COMMITTED)
        version, history = session.snapshot()
        assert len(results) == 4000
        assert set(results) <= {CommitStatus.COMMITTED, CommitStatus.STALE}
        assert version == committed == len(history) // 2
        answers = [m.content for m in history if m.role is Role.ASSISTANT]
        assert len(answers) == len(set(answers))
        assert whole[0]
