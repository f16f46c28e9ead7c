"""HttpTransport.stream against a real server on 127.0.0.1 that streams server-sent events (no other traffic)."""

from __future__ import annotations

import io
import json
import threading
import time
import traceback
from collections.abc import Callable, Iterator, Sequence
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from lab.messages import ChatRequest, Message
from lab.sessions.transactional import AskStatus, TransactionalChat
from lab.sessions.versioned import CommitStatus, VersionedSession
from lab.transport.contract import FailureKind, Reply, TransportFailure
from lab.transport.http import HttpTransport
from lab.transport.sse import read_events
from lab.transport.streaming import Candidate, streaming_request

FAKE_KEY = "sk-fake-stream-0123456789-never-print-me"

Handler = Callable[["_Sse"], None]


def event(content: str | None = None, finish: str | None = None) -> bytes:
    """One chunk event, the OpenAI form."""
    delta = {} if content is None else {"content": content}
    choice = {"index": 0, "delta": delta, "finish_reason": finish}
    return b"data: " + json.dumps({"object": "chat.completion.chunk", "choices": [choice]}).encode() + b"\n\n"


DONE = b"data: [DONE]\n\n"


class _Sse(BaseHTTPRequestHandler):
    """Records each request; the test's handler for request n writes the response."""

    server: _Server

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        self.server.received.append((self.command, self.path, dict(self.headers), body))
        handlers = self.server.handlers
        handlers[min(len(self.server.received), len(handlers)) - 1](self)

    do_GET = do_POST

    def start(self, content_type: str = "text/event-stream") -> None:
        self.send_response(200)
        self.send_header("Content-Type", content_type)
        self.end_headers()
        self.wfile.flush()

    def write(self, data: bytes) -> None:
        self.wfile.write(data)
        self.wfile.flush()

    def log_message(self, format: str, *args: Any) -> None:
        """Quiet."""


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, handlers: Sequence[Handler]) -> None:
        super().__init__(("127.0.0.1", 0), _Sse)
        self.handlers = list(handlers)
        self.received: list[tuple[str, str, dict[str, str], bytes]] = []
        self.hung_up = threading.Event()
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self.serve_forever, kwargs={"poll_interval": 0.01}, daemon=True)
        self.thread.start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}/v1"

    def handle_error(self, request: Any, client_address: Any) -> None:
        """Quiet: clients here hang up on purpose."""

    def bodies(self) -> list[dict[str, Any]]:
        return [json.loads(body) for method, _, _, body in self.received if method == "POST"]


@pytest.fixture
def serve() -> Iterator[Callable[..., _Server]]:
    started: list[_Server] = []

    def start(*handlers: Handler) -> _Server:
        server = _Server(handlers)
        started.append(server)
        return server

    yield start
    for server in started:
        server.stop.set()
        server.shutdown()
        server.server_close()


def streams(*events: bytes) -> Handler:
    def handle(h: _Sse) -> None:
        h.start()
        for data in events:
            h.write(data)

    return handle


def stalls_after(*events: bytes) -> Handler:
    """Sends ``events``, then keeps the connection open sending nothing until the client hangs up."""

    def handle(h: _Sse) -> None:
        h.start()
        for data in events:
            h.write(data)
        while not h.server.stop.is_set():
            try:
                h.write(b": still here\n")  # a comment: no text, but it proves whether the client is still reading
            except OSError:
                h.server.hung_up.set()
                return
            time.sleep(0.05)

    return handle


def _chat(server: _Server, **options: Any) -> TransactionalChat:
    return TransactionalChat(HttpTransport(server.url, FAKE_KEY, **options), stream=True)


class TestStreamedReplies:
    @pytest.mark.timeout(10)
    def test_a_finished_stream_is_shown_committed_and_carried(self, serve: Callable[..., _Server]) -> None:
        server = serve(streams(event("Par"), event("is"), event(finish="stop"), DONE), streams(event("ok", "stop")))
        chat = _chat(server)
        shown: list[str] = []
        result = chat.ask("capital?", on_delta=shown.append, request_id="r1")
        assert (result.status, result.answer, shown) == (AskStatus.COMMITTED, "Paris", ["Par", "is"])
        assert chat.ask("and?").committed  # a finish reason, then the connection closed: the stream ended
        first, second = server.bodies()
        assert first["stream"] is True and second["stream"] is True
        assert second["messages"][-3:] == [
            {"role": "user", "content": "capital?"},
            {"role": "assistant", "content": "Paris"},
            {"role": "user", "content": "and?"},
        ]
        _, _, headers, body = server.received[0]
        assert headers["Idempotency-Key"] == "r1" and headers["Accept"] == "text/event-stream"
        assert result.request_bytes == len(body)  # the budget measured the bytes sent, "stream":true included

    @pytest.mark.timeout(10)
    @pytest.mark.parametrize(
        ("failing", "status"),
        [
            pytest.param(streams(event("half an "), event("answer")), AskStatus.IO, id="cut"),
            pytest.param(streams(*[event("長" * 10_000)] * 10, event(finish="stop"), DONE), AskStatus.IO, id="256KiB"),
            pytest.param(streams(event("cut short"), event(finish="length"), DONE), AskStatus.INCOMPLETE, id="length"),
            pytest.param(streams(event("no reason"), DONE), AskStatus.INCOMPLETE, id="no-reason"),
            pytest.param(streams(b"data: {not json\n\n"), AskStatus.PARSE, id="not-json"),
            pytest.param(streams(event("a"), b'data: {"error": {"message": "x"}}\n\n'), AskStatus.IO, id="error"),
        ],
    )
    def test_a_stream_that_did_not_end_well_commits_nothing(
        self, serve: Callable[..., _Server], failing: Handler, status: AskStatus
    ) -> None:
        server = serve(streams(event("A1", "stop"), DONE), failing, streams(event("A3", "stop"), DONE))
        chat = _chat(server)
        assert chat.ask("q1").committed
        assert chat.ask("q2 fails").status is status
        assert [m.content for m in chat.snapshot()] == ["q1", "A1"]
        assert chat.ask("q3").committed
        contents = [m["content"] for m in server.bodies()[2]["messages"]]
        assert "q2 fails" not in contents and "A1" in contents
        assert len(server.received) == 3  # no automatic retry

    @pytest.mark.timeout(10)
    def test_a_stalled_stream_ends_at_the_deadline_and_the_socket_closes(self, serve: Callable[..., _Server]) -> None:
        server = serve(stalls_after(event("slow ")))
        chat = _chat(server, deadline=0.3, read_timeout=60)
        started = time.monotonic()
        result = chat.ask("q")
        assert result.status is AskStatus.TIMEOUT and chat.snapshot() == ()
        assert time.monotonic() - started < 5  # generous: the deadline is 0.3 s, the read timeout 60 s
        assert server.hung_up.wait(5), "the server never saw the client hang up"

    @pytest.mark.timeout(10)
    def test_should_stop_cancels_and_closes_the_socket(self, serve: Callable[..., _Server]) -> None:
        server = serve(stalls_after(event("a"), event("b")))
        seen: list[str] = []
        transport = HttpTransport(server.url, FAKE_KEY)
        request = streaming_request(ChatRequest("m", (Message("user", "q"),)))
        with pytest.raises(TransportFailure) as raised:
            transport.stream(request, on_delta=seen.append, should_stop=lambda: len(seen) == 2)
        assert raised.value.kind is FailureKind.CANCELLED and seen == ["a", "b"]
        assert server.hung_up.wait(5)

    @pytest.mark.timeout(10)
    def test_an_interrupt_while_streaming_closes_the_socket_and_commits_nothing(
        self, serve: Callable[..., _Server]
    ) -> None:
        server = serve(stalls_after(event("a")))
        chat = _chat(server)

        def interrupt(piece: str) -> None:
            raise KeyboardInterrupt

        with pytest.raises(KeyboardInterrupt):
            chat.ask("q", on_delta=interrupt)
        assert chat.snapshot() == () and server.hung_up.wait(5)

    @pytest.mark.timeout(10)
    def test_a_whole_answer_to_a_stream_request_is_read_whole(self, serve: Callable[..., _Server]) -> None:
        def whole(h: _Sse) -> None:
            h.start("application/json")
            h.write(json.dumps({"choices": [{"message": {"content": "whole"}, "finish_reason": "stop"}]}).encode())

        assert _chat(serve(whole)).ask("q").answer == "whole"

    @pytest.mark.timeout(10)
    def test_chunked_transfer_encoding(self, serve: Callable[..., _Server]) -> None:
        def chunked(h: _Sse) -> None:
            h.protocol_version = "HTTP/1.1"
            h.send_response(200)
            h.send_header("Content-Type", "text/event-stream")
            h.send_header("Transfer-Encoding", "chunked")
            h.end_headers()
            for data in (event("chun"), event("ked", "stop"), DONE):
                h.write(b"%x\r\n%s\r\n" % (len(data), data))
            h.write(b"0\r\n\r\n")
            h.close_connection = True

        assert _chat(serve(chunked)).ask("q").answer == "chunked"

    @pytest.mark.timeout(10)
    def test_no_key_in_any_failure(self, serve: Callable[..., _Server]) -> None:
        server = serve(streams(event("x")))
        try:
            HttpTransport(server.url, FAKE_KEY).stream(ChatRequest("m", (Message("user", "q"),)))
        except TransportFailure as failure:
            text = "".join(traceback.format_exception(failure)) + repr(failure) + str(failure)
            assert FAKE_KEY not in text and failure.kind is FailureKind.IO
        else:
            pytest.fail("a cut stream came back as a reply")


class TestLookup:
    @pytest.mark.timeout(10)
    def test_lookup_reads_the_providers_record(self, serve: Callable[..., _Server]) -> None:
        def record(h: _Sse) -> None:
            if h.path.endswith("/r-known"):
                h.start("application/json")
                h.write(json.dumps({"choices": [{"message": {"content": "late"}, "finish_reason": "stop"}]}).encode())
            else:
                h.send_error(404)

        server = serve(record)
        transport = HttpTransport(server.url, FAKE_KEY, lookup_path="/requests")
        assert transport.can_reconcile
        assert transport.lookup("r-known") == Reply("late", "stop")
        assert transport.lookup("r/unknown") is None
        assert [(m, p) for m, p, _, _ in server.received] == [
            ("GET", "/v1/requests/r-known"),
            ("GET", "/v1/requests/r%2Funknown"),
        ]
        session = VersionedSession("s")
        ticket = session.begin("r-known", "q")
        assert session.reconcile(ticket, transport) is CommitStatus.COMMITTED

    def test_without_a_lookup_path_nothing_is_sent_and_unknown_stays_unknown(self) -> None:
        transport = HttpTransport("http://127.0.0.1:9/v1", FAKE_KEY)  # port 9: nothing is ever sent there
        assert not transport.can_reconcile and transport.lookup("r1") is None
        session = VersionedSession("s")
        assert session.reconcile(session.begin("r1", "q"), transport) is CommitStatus.UNKNOWN


class TestEvents:
    """read_events on bytes alone: the rules of the wire form."""

    def _read(self, data: bytes, **options: Any) -> Reply:
        return read_events(io.BytesIO(data), Candidate(**options))

    def test_comments_other_fields_and_multi_line_data(self) -> None:
        data = b": keep-alive\nevent: chunk\nid: 1\n" + event("a") + b'data: {"choices":\ndata: [{"delta":{}}]}\n\n'
        assert self._read(data + event(finish="stop") + DONE) == Reply("a", "stop")

    def test_crlf_lines_and_usage_only_events(self) -> None:
        data = event("a").replace(b"\n", b"\r\n") + b'data: {"choices": [], "usage": {}}\n\n' + DONE
        assert self._read(data) == Reply("a", None)

    @pytest.mark.parametrize(
        ("data", "kind"),
        [
            (b'data: {"choices": [{"delta": {"content": 3}}]}\n\n', FailureKind.PARSE),
            (b"data: [1]\n\n", FailureKind.PARSE),
            (b'data: {"choices": "x"}\n\n', FailureKind.PARSE),
            (b"data: " + b"x" * 300_000 + b"\n\n", FailureKind.IO),
        ],
    )
    def test_malformed_events(self, data: bytes, kind: FailureKind) -> None:
        with pytest.raises(TransportFailure) as raised:
            self._read(data)
        assert raised.value.kind is kind

    def test_the_budget_counts_every_byte_read(self) -> None:
        data = b": padding padding padding\n" * 10 + event("a", "stop") + DONE
        with pytest.raises(TransportFailure) as raised:
            self._read(data, max_bytes=100)
        assert raised.value.kind is FailureKind.IO
