"""Streamed replies on the scripted double: a candidate until the stream ends, the provider's journal, deadlines."""

from __future__ import annotations

import time

import pytest

from lab.errors import UsageError
from lab.messages import ChatRequest, Message
from lab.sessions.transactional import AskStatus, TransactionalChat
from lab.transport.contract import FailureKind, Reply, StreamingTransport, TransportFailure
from lab.transport.offline import OfflineTransport
from lab.transport.scripted import Held, Pause, ScriptedTransport, Stream, StreamEnd
from lab.transport.streaming import Candidate, is_streaming, streaming_request


def _request(question: str) -> ChatRequest:
    return ChatRequest("m", (Message("user", question),))


def _failure(transport: ScriptedTransport, **options: object) -> FailureKind:
    with pytest.raises(TransportFailure) as raised:
        transport.stream(_request("q"), **options)  # type: ignore[arg-type]
    return raised.value.kind


class TestStreamingRequest:
    def test_the_body_is_the_serializers_with_stream_true_last(self) -> None:
        request = _request("好")
        streamed = streaming_request(request)
        assert streamed.body == request.body[:-1] + b',"stream":true}'
        assert streamed.size == len(streamed.body) and is_streaming(streamed.body) and not is_streaming(request.body)
        assert streaming_request(streamed) is streamed
        assert streamed.question == "好"


class TestCandidate:
    def test_only_an_ended_stream_is_a_reply(self) -> None:
        candidate = Candidate()
        candidate.add("a")
        with pytest.raises(TransportFailure) as cut:
            candidate.reply()
        assert cut.value.kind is FailureKind.IO
        candidate.finish(None)
        assert candidate.reply() == Reply("a", None)

    def test_past_the_budget_nothing_is_kept(self) -> None:
        candidate = Candidate(max_bytes=5)
        candidate.add("好")  # 3 bytes
        with pytest.raises(TransportFailure) as over:
            candidate.add("好")
        assert over.value.kind is FailureKind.IO and candidate.text == ""


class TestScriptedStream:
    def test_a_finished_stream_arrives_piece_by_piece(self) -> None:
        transport = ScriptedTransport([Stream(("Par", "is"))])
        pieces: list[str] = []
        reply = transport.stream(_request("q"), on_delta=pieces.append, request_id="r1")
        assert reply == Reply("Paris", "stop") and pieces == ["Par", "is"]
        entry = transport.journal["r1"]
        assert (entry.sends, entry.chunks_billed, entry.finished, entry.abandoned) == (1, 2, reply, None)
        assert isinstance(transport, StreamingTransport)

    def test_send_joins_a_stream_under_the_same_rules(self) -> None:
        transport = ScriptedTransport([Stream(("a", "b"), finish_reason="length"), Stream(("a",), end=StreamEnd.CUT)])
        assert transport.send(_request("q")) == Reply("ab", "length")
        with pytest.raises(TransportFailure) as cut:
            transport.send(_request("q"))
        assert cut.value.kind is FailureKind.IO

    def test_a_plain_reply_streams_as_one_piece(self) -> None:
        pieces: list[str] = []
        assert ScriptedTransport([Reply("x")]).stream(_request("q"), on_delta=pieces.append) == Reply("x")
        assert pieces == ["x"]

    def test_a_cut_stream_is_io_and_billed_for_what_was_sent(self) -> None:
        transport = ScriptedTransport([Stream(("a", "b", "c"), end=StreamEnd.CUT)])
        assert _failure(transport, request_id="r1") is FailureKind.IO
        entry = transport.journal["r1"]
        assert (entry.chunks_billed, entry.finished, entry.abandoned) == (3, None, "IO")

    def test_a_stream_past_256_kib_is_io(self) -> None:
        chunk = "x" * 100_000
        transport = ScriptedTransport([Stream((chunk, chunk, chunk, "end"))])
        seen: list[str] = []
        assert _failure(transport, on_delta=seen.append) is FailureKind.IO
        assert len(seen) == 2  # the third chunk passes 262,144 bytes and is never shown

    def test_should_stop_cancels_and_the_provider_stops_billing(self) -> None:
        transport = ScriptedTransport([Stream(("a", "b", "c", "d"))])
        seen: list[str] = []
        kind = _failure(transport, on_delta=seen.append, should_stop=lambda: len(seen) == 2, request_id="r")
        assert kind is FailureKind.CANCELLED and seen == ["a", "b"]
        assert transport.journal["r"].chunks_billed == 2 and transport.lookup("r") is None

    def test_a_provider_that_finishes_anyway_keeps_the_answer(self) -> None:
        transport = ScriptedTransport([Stream(("a", "b", "c"), finishes_if_abandoned=True)])
        assert _failure(transport, should_stop=lambda: True, request_id="r") is FailureKind.CANCELLED
        assert transport.journal["r"].chunks_billed == 3
        calls = transport.calls
        assert transport.lookup("r") == Reply("abc", "stop")
        assert transport.calls == calls and transport.journal.lookups == ["r"]  # a lookup is not a request

    @pytest.mark.timeout(10)
    def test_a_stall_past_the_deadline_is_a_timeout(self) -> None:
        """Outside a run the clock is real: a 0.05 s deadline stops a 60 s stall long before it ends."""
        transport = ScriptedTransport([Stream(("a", Pause(seconds=60), "b"))], deadline=0.05)
        started = time.monotonic()
        assert _failure(transport, request_id="r") is FailureKind.TIMEOUT
        assert time.monotonic() - started < 5
        assert transport.journal["r"].abandoned == "TIMEOUT"

    def test_a_pause_inside_the_deadline_is_waited_out(self) -> None:
        transport = ScriptedTransport([Stream(("a", Pause(seconds=0.01), "b"))], deadline=30)
        assert transport.stream(_request("q")) == Reply("ab")

    def test_a_held_stream_waits_for_its_gate(self) -> None:
        class Gate:
            opened = False

            def wait(self) -> None:
                self.opened = True

        gate = Gate()
        transport = ScriptedTransport([Held(Stream(("late",)), until=gate)])
        assert transport.stream(_request("q")) == Reply("late") and gate.opened

    def test_a_chunk_must_be_text_or_a_pause(self) -> None:
        with pytest.raises(UsageError, match="text or Pause"):
            Stream(("a", 3))  # type: ignore[arg-type]


class TestTransactionalStreaming:
    def _chat(self, *steps: Stream | Reply) -> tuple[TransactionalChat, ScriptedTransport]:
        transport = ScriptedTransport(steps)
        return TransactionalChat(transport, stream=True), transport

    @pytest.mark.parametrize(
        ("failed", "status"),
        [
            (Stream(("half",), end=StreamEnd.CUT), AskStatus.IO),
            (Stream(("x" * 200_000, "y" * 100_000)), AskStatus.IO),
            (Stream(("short",), finish_reason="length"), AskStatus.INCOMPLETE),
            (Stream(("no reason",), finish_reason=None), AskStatus.INCOMPLETE),
            (Stream(("a", Pause(seconds=60))), AskStatus.TIMEOUT),
        ],
    )
    def test_a_stream_that_did_not_end_well_commits_nothing(self, failed: Stream, status: AskStatus) -> None:
        chat, transport = self._chat(Stream(("A1",)), failed, Stream(("A3",)))
        assert chat.ask("q1").committed
        # outside a run the clock is real: a short deadline ends the 60 s stall at once (and only there: no race)
        transport.deadline = 0.05 if status is AskStatus.TIMEOUT else None
        assert chat.ask("q2 failed").status is status
        transport.deadline = None
        assert [m.content for m in chat.snapshot()] == ["q1", "A1"]
        assert chat.ask("q3").committed
        assert b"q2 failed" not in transport.requests[2] and b'"A1"' in transport.requests[2]
        assert all(is_streaming(body) for body in transport.requests)

    def test_a_stopped_stream_is_cancelled(self) -> None:
        chat, _ = self._chat(Stream(("a", "b")))
        assert chat.ask("q", should_stop=lambda: True).status is AskStatus.CANCELLED
        assert chat.snapshot() == ()

    def test_pieces_are_shown_and_the_request_id_reaches_the_provider(self) -> None:
        chat, transport = self._chat(Stream(("A", "B")))
        seen: list[str] = []
        assert chat.ask("q", on_delta=seen.append, request_id="r-1").answer == "AB"
        assert seen == ["A", "B"] and "r-1" in transport.journal

    def test_the_budget_measures_the_streaming_body(self) -> None:
        chat, transport = self._chat(Stream(("A",)))
        result = chat.ask("q")
        assert result.request_bytes == len(transport.requests[0])

    def test_a_transport_that_cannot_stream_is_refused(self) -> None:
        class Plain:
            def send(self, request: ChatRequest) -> Reply:
                return Reply("x")

        with pytest.raises(UsageError, match="cannot"):
            TransactionalChat(Plain(), stream=True)

    def test_offline_streams_words_and_cut(self) -> None:
        chat = TransactionalChat(OfflineTransport(), stream=True)
        seen: list[str] = []
        assert chat.ask("hello there", on_delta=seen.append).committed
        assert "".join(seen) == "(offline) you asked: hello there" and len(seen) > 1
        assert chat.ask("!cut").status is AskStatus.IO
        assert chat.ask("!cancelled").committed  # a cancel is the user's doing, not a question's
