"""Reconciliation after a timeout or a cancel, and early STALE: the versioned session's side of streaming."""

from __future__ import annotations

import pytest

from lab.errors import ArgumentTypeError
from lab.sessions.versioned import CommitStatus, Ticket, VersionedSession
from lab.transport.contract import FailureKind, Reply, TransportFailure
from lab.transport.offline import OfflineTransport
from lab.transport.scripted import ScriptedTransport, Stream
from lab.transport.streaming import is_streaming


def _timed_out(session: VersionedSession, transport: ScriptedTransport, request_id: str = "r-slow") -> Ticket:
    ticket = session.begin(request_id, "slow question")
    with pytest.raises(TransportFailure) as raised:
        transport.stream(ticket.to_request(stream=True), should_stop=lambda: True, request_id=request_id)
    assert raised.value.kind is FailureKind.CANCELLED
    return ticket


class TestReconcile:
    def test_a_finished_late_answer_commits_without_a_second_request(self) -> None:
        session = VersionedSession("s")
        transport = ScriptedTransport([Stream(("late ", "answer"), finishes_if_abandoned=True)])
        ticket = _timed_out(session, transport)
        assert session.reconcile(ticket, transport) is CommitStatus.COMMITTED
        assert session.snapshot()[1][-1].content == "late answer"
        assert transport.calls == 1 and transport.journal["r-slow"].sends == 1
        assert session.reconcile(ticket, transport) is CommitStatus.DUPLICATE  # asked twice: landed once

    def test_a_late_answer_on_a_moved_version_is_stale(self) -> None:
        session = VersionedSession("s")
        transport = ScriptedTransport([Stream(("late",), finishes_if_abandoned=True)])
        ticket = _timed_out(session, transport)
        session.commit(session.begin("r-fast", "fast"), "fast answer", "stop")
        assert session.reconcile(ticket, transport) is CommitStatus.STALE
        assert session.version == 1

    def test_nothing_finished_stays_unknown(self) -> None:
        session = VersionedSession("s")
        transport = ScriptedTransport([Stream(("a", "b"))])
        ticket = _timed_out(session, transport)
        assert session.reconcile(ticket, transport) is CommitStatus.UNKNOWN
        assert session.version == 0

    def test_no_record_to_ask_stays_unknown_and_sends_nothing(self) -> None:
        session = VersionedSession("s")
        offline = OfflineTransport()
        ticket = session.begin("r", "q")
        assert session.reconcile(ticket, offline) is CommitStatus.UNKNOWN and offline.calls == 0

    def test_a_failed_lookup_stays_unknown(self) -> None:
        class Broken:
            can_reconcile = True

            def lookup(self, request_id: str) -> Reply | None:
                raise TransportFailure(FailureKind.IO)

        session = VersionedSession("s")
        assert session.reconcile(session.begin("r", "q"), Broken()) is CommitStatus.UNKNOWN

    def test_a_finished_incomplete_answer_is_invalid(self) -> None:
        session = VersionedSession("s")
        transport = ScriptedTransport([Stream(("cut",), finish_reason="length", finishes_if_abandoned=True)])
        ticket = _timed_out(session, transport)
        assert session.reconcile(ticket, transport) is CommitStatus.INVALID

    def test_a_ticket_is_checked(self) -> None:
        with pytest.raises(ArgumentTypeError):
            VersionedSession("s").reconcile("r1", OfflineTransport())  # type: ignore[arg-type]


class TestEarlyStale:
    def test_is_current_follows_the_version(self) -> None:
        session = VersionedSession("s")
        ticket = session.begin("r1", "q")
        assert session.is_current(ticket)
        session.commit(session.begin("r2", "q2"), "a", "stop")
        assert not session.is_current(ticket)

    def test_stopping_a_stale_stream_bills_less(self) -> None:
        """The same slow stream, let finish (then refused) and stopped once the version moved: fewer chunks billed."""
        chunks = tuple(f"w{n} " for n in range(8))
        billed = {}
        for early in (False, True):
            session = VersionedSession("s")
            transport = ScriptedTransport([Stream(chunks)])
            ticket = session.begin("r-slow", "slow")
            seen: list[str] = []

            def arrived(piece: str, seen: list[str] = seen, session: VersionedSession = session) -> None:
                seen.append(piece)
                if len(seen) == 3:  # the fast request commits while the slow one streams
                    session.commit(session.begin("r-fast", "fast"), "fast answer", "stop")

            def stop(session: VersionedSession = session, ticket: Ticket = ticket, early: bool = early) -> bool:
                return early and not session.is_current(ticket)

            try:
                reply = transport.stream(ticket.to_request(stream=True), on_delta=arrived, should_stop=stop)
                assert session.commit(ticket, reply.content, reply.finish_reason) is CommitStatus.STALE
            except TransportFailure as failure:
                assert early and failure.kind is FailureKind.CANCELLED
            billed[early] = transport.journal.chunks_billed
            assert is_streaming(transport.requests[0])
        assert billed == {False: 8, True: 3}
