"""HttpTransport against a real HTTP server on 127.0.0.1 that each test starts and stops itself."""

from __future__ import annotations

import json
import logging
import socket
import threading
import time
import traceback
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from email.message import Message as Headers
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from lab.errors import UsageError
from lab.messages import ChatRequest, Message, Role
from lab.sessions.transactional import AskStatus, TransactionalChat
from lab.transport.contract import FailureKind, Reply, TransportFailure
from lab.transport.http import DEFAULT_MAX_BODY_BYTES, HttpTransport

FAKE_KEY = "sk-fake-0123456789abcdef-never-print-me"
SECRET = "SECRET-from-a-500-body-7f3a9c"

Behaviour = Callable[[BaseHTTPRequestHandler, "_LoopbackServer"], None]


@dataclass(frozen=True)
class _Received:
    path: str
    headers: Headers
    body: bytes


class _Httpd(ThreadingHTTPServer):
    lab: _LoopbackServer

    def handle_error(self, request: Any, client_address: Any) -> None:
        """Stay quiet: clients in these tests hang up on purpose (timeouts, bodies over the cap)."""


class _Handler(BaseHTTPRequestHandler):
    server: _Httpd

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        behaviour = self.server.lab.record(_Received(self.path, self.headers, body))
        behaviour(self, self.server.lab)

    def log_message(self, format: str, *args: Any) -> None:
        """Stay quiet: the tests read what the server received, not its log."""


class _LoopbackServer:
    """A real HTTP server on 127.0.0.1; request n gets behaviour n, and the last behaviour repeats."""

    def __init__(self, behaviours: Sequence[Behaviour]) -> None:
        self.received: list[_Received] = []
        self.stop = threading.Event()
        self.trickled = 0
        self._behaviours = list(behaviours)
        self._guard = threading.Lock()
        self._httpd = _Httpd(("127.0.0.1", 0), _Handler)
        self._httpd.lab = self
        self._thread = threading.Thread(target=self._httpd.serve_forever, kwargs={"poll_interval": 0.01}, daemon=True)
        self._thread.start()
        self._closed = False

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._httpd.server_address[1]}/v1"

    def record(self, received: _Received) -> Behaviour:
        with self._guard:
            self.received.append(received)
            return self._behaviours[min(len(self.received), len(self._behaviours)) - 1]

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        self.stop.set()
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join(timeout=2)


@pytest.fixture
def serve() -> Iterator[Callable[..., _LoopbackServer]]:
    started: list[_LoopbackServer] = []

    def start(*behaviours: Behaviour) -> _LoopbackServer:
        server = _LoopbackServer(behaviours)
        started.append(server)
        return server

    yield start
    for server in started:
        server.close()


def _completion(content: object, finish_reason: str | None = "stop", *, omit_reason: bool = False) -> bytes:
    choice: dict[str, object] = {"index": 0, "message": {"role": "assistant", "content": content}}
    if not omit_reason:
        choice["finish_reason"] = finish_reason
    return json.dumps({"id": "chatcmpl-1", "object": "chat.completion", "choices": [choice]}).encode()


def _respond(status: int, body: bytes, *, declare_length: bool = True) -> Behaviour:
    def behaviour(handler: BaseHTTPRequestHandler, server: _LoopbackServer) -> None:
        handler.send_response(status)
        handler.send_header("Content-Type", "application/json")
        if declare_length:
            handler.send_header("Content-Length", str(len(body)))
        handler.end_headers()
        handler.wfile.write(body)

    return behaviour


def _stall(handler: BaseHTTPRequestHandler, server: _LoopbackServer) -> None:
    server.stop.wait(10)


def _trickle_body(handler: BaseHTTPRequestHandler, server: _LoopbackServer) -> None:
    handler.send_response(200)
    handler.send_header("Content-Length", "100000")
    handler.end_headers()
    while not server.stop.wait(0.02):
        handler.wfile.write(b" ")
        server.trickled += 1


def _trickle_headers(handler: BaseHTTPRequestHandler, server: _LoopbackServer) -> None:
    handler.wfile.write(b"HTTP/1.1 200 OK\r\nX-Slow: ")
    while not server.stop.wait(0.02):
        handler.wfile.write(b"a")
        server.trickled += 1


def _endless_body(handler: BaseHTTPRequestHandler, server: _LoopbackServer) -> None:
    handler.send_response(200)
    handler.end_headers()
    while not server.stop.is_set():
        handler.wfile.write(b" " * 16384)


def _slow_but_complete(handler: BaseHTTPRequestHandler, server: _LoopbackServer) -> None:
    body = b" " * 40 + _completion("late but whole")
    handler.send_response(200)
    handler.send_header("Content-Length", str(len(body)))
    handler.end_headers()
    for index in range(len(body)):
        if index < 40 and server.stop.wait(0.02):
            return
        handler.wfile.write(body[index : index + 1])


_OK = _respond(200, _completion("first answer"))
_SECRET_BODY = json.dumps({"error": {"message": f"internal error, token {SECRET}"}}).encode()


def _request(question: str) -> ChatRequest:
    return ChatRequest("agnes-3.0-flash", (Message(Role.USER, question),))


def _refused_url() -> str:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    return f"http://127.0.0.1:{port}/v1"


class TestRequest:
    @pytest.mark.timeout(5)
    def test_sends_the_session_bytes_with_the_key(self, serve: Callable[..., _LoopbackServer]) -> None:
        """The server receives ChatRequest.body byte for byte, as JSON, with the bearer key, at /chat/completions."""
        server = serve(_OK, _respond(200, _completion("second answer")))
        chat = TransactionalChat(HttpTransport(server.url, FAKE_KEY))
        chat.ask("Capital of France? 你好")
        chat.ask("And of Italy?")
        first, second = server.received
        assert first.body == chat.build_request([Message(Role.USER, "Capital of France? 你好")]).body
        assert second.body == chat.build_request([*chat.snapshot()[:2], Message(Role.USER, "And of Italy?")]).body
        assert first.path == "/v1/chat/completions"
        assert first.headers["Authorization"] == f"Bearer {FAKE_KEY}"
        assert first.headers["Content-Type"] == "application/json"

    @pytest.mark.timeout(5)
    def test_a_trailing_slash_changes_nothing(self, serve: Callable[..., _LoopbackServer]) -> None:
        """A base URL ending in a slash posts to the same path."""
        server = serve(_OK)
        HttpTransport(server.url + "/", FAKE_KEY).send(_request("q"))
        assert server.received[0].path == "/v1/chat/completions"

    @pytest.mark.timeout(5)
    def test_returns_content_and_finish_reason(self, serve: Callable[..., _LoopbackServer]) -> None:
        """A 2xx completion comes back as its content and finish reason."""
        server = serve(_respond(200, _completion("Paris", "stop")))
        assert HttpTransport(server.url, FAKE_KEY).send(_request("q")) == Reply("Paris", "stop")


_FAILING_CASES = [
    pytest.param(_respond(200, _completion("cut sh", "length")), AskStatus.INCOMPLETE, {}, id="length"),
    pytest.param(_respond(200, _completion("no reason", omit_reason=True)), AskStatus.INCOMPLETE, {}, id="no-reason"),
    pytest.param(_respond(200, _completion("")), AskStatus.EMPTY, {}, id="empty-content"),
    pytest.param(_respond(200, _completion(None)), AskStatus.EMPTY, {}, id="null-content"),
    pytest.param(_respond(429, b'{"error":"slow down"}'), AskStatus.HTTP_429, {}, id="429"),
    pytest.param(_respond(500, _SECRET_BODY), AskStatus.HTTP_STATUS, {}, id="500"),
    pytest.param(_respond(200, b'{"choices": [{"message": '), AskStatus.PARSE, {}, id="malformed-json"),
    pytest.param(_respond(200, b" " * (DEFAULT_MAX_BODY_BYTES + 1)), AskStatus.IO, {}, id="declared-over-cap"),
    pytest.param(_endless_body, AskStatus.IO, {}, id="endless-body"),
    pytest.param(_stall, AskStatus.TIMEOUT, {"read_timeout": 0.3}, id="stall"),
    pytest.param(_trickle_body, AskStatus.TIMEOUT, {"deadline": 0.5}, id="trickled-body"),
    pytest.param(_trickle_headers, AskStatus.TIMEOUT, {"deadline": 0.5}, id="trickled-headers"),
]


class TestReplyTable:
    @pytest.mark.timeout(5)
    def test_a_stop_reply_commits(self, serve: Callable[..., _LoopbackServer]) -> None:
        """A 200 with content and finish_reason stop commits the pair."""
        server = serve(_OK)
        chat = TransactionalChat(HttpTransport(server.url, FAKE_KEY))
        result = chat.ask("one")
        assert result.status is AskStatus.COMMITTED
        assert [m.content for m in chat.snapshot()] == ["one", "first answer"]

    @pytest.mark.slow
    @pytest.mark.timeout(5)
    @pytest.mark.parametrize(("failing", "status", "options"), _FAILING_CASES)
    def test_a_failure_commits_nothing_and_is_not_retried(
        self,
        serve: Callable[..., _LoopbackServer],
        failing: Behaviour,
        status: AskStatus,
        options: dict[str, Any],
    ) -> None:
        """After a committed pair, a failing reply gets its status, changes no history and is sent once."""
        server = serve(_OK, failing)
        chat = TransactionalChat(HttpTransport(server.url, FAKE_KEY, **options))
        assert chat.ask("one").committed
        before = chat.snapshot()
        result = chat.ask("two")
        assert result.status is status
        assert chat.snapshot() == before
        assert len(server.received) == 2

    @pytest.mark.timeout(5)
    def test_a_refused_connection_is_io(self, serve: Callable[..., _LoopbackServer]) -> None:
        """When the server has gone, the ask is IO and the committed pair stays."""
        server = serve(_OK)
        chat = TransactionalChat(HttpTransport(server.url, FAKE_KEY))
        assert chat.ask("one").committed
        before = chat.snapshot()
        server.close()
        assert chat.ask("two").status is AskStatus.IO
        assert chat.snapshot() == before
        assert len(server.received) == 1

    @pytest.mark.timeout(5)
    def test_a_closed_port_is_io(self) -> None:
        """Connecting to a port nobody listens on raises IO."""
        with pytest.raises(TransportFailure) as caught:
            HttpTransport(_refused_url(), FAKE_KEY).send(_request("q"))
        assert caught.value.kind is FailureKind.IO

    @pytest.mark.timeout(5)
    @pytest.mark.parametrize("code", [404, 302, 503])
    def test_other_statuses_keep_their_code(self, serve: Callable[..., _LoopbackServer], code: int) -> None:
        """Any non-2xx other than 429 is HTTP_STATUS with its code; a redirect is not followed."""
        server = serve(_respond(code, b"{}"))
        with pytest.raises(TransportFailure) as caught:
            HttpTransport(server.url, FAKE_KEY).send(_request("q"))
        assert (caught.value.kind, caught.value.status) == (FailureKind.HTTP_STATUS, code)
        assert len(server.received) == 1


class TestBodyCap:
    @pytest.mark.timeout(5)
    def test_a_body_exactly_at_the_cap_is_read(self, serve: Callable[..., _LoopbackServer]) -> None:
        """A body of exactly max_body_bytes is accepted."""
        body = _completion("fits")
        server = serve(_respond(200, body, declare_length=False))
        reply = HttpTransport(server.url, FAKE_KEY, max_body_bytes=len(body)).send(_request("q"))
        assert reply.content == "fits"

    @pytest.mark.timeout(5)
    def test_one_byte_over_the_cap_is_io(self, serve: Callable[..., _LoopbackServer]) -> None:
        """A body one byte over max_body_bytes is IO, even without a Content-Length."""
        body = _completion("fits")
        server = serve(_respond(200, body, declare_length=False))
        with pytest.raises(TransportFailure) as caught:
            HttpTransport(server.url, FAKE_KEY, max_body_bytes=len(body) - 1).send(_request("q"))
        assert caught.value.kind is FailureKind.IO


class TestTimeouts:
    @pytest.mark.timeout(5)
    def test_a_stalled_server_hits_the_read_timeout(self, serve: Callable[..., _LoopbackServer]) -> None:
        """A server that sends nothing is TIMEOUT after the read timeout."""
        server = serve(_stall)
        started = time.monotonic()
        with pytest.raises(TransportFailure) as caught:
            HttpTransport(server.url, FAKE_KEY, read_timeout=0.3).send(_request("q"))
        assert caught.value.kind is FailureKind.TIMEOUT
        assert 0.25 <= time.monotonic() - started < 3

    @pytest.mark.slow
    @pytest.mark.timeout(5)
    def test_a_read_timeout_is_not_a_deadline(self, serve: Callable[..., _LoopbackServer]) -> None:
        """Bytes every 20 ms keep a 0.3 s read timeout from firing, so the call outlasts it."""
        server = serve(_slow_but_complete)
        started = time.monotonic()
        reply = HttpTransport(server.url, FAKE_KEY, read_timeout=0.3).send(_request("q"))
        assert reply.content == "late but whole"
        assert time.monotonic() - started > 0.6

    @pytest.mark.slow
    @pytest.mark.timeout(5)
    @pytest.mark.parametrize("trickle", [_trickle_body, _trickle_headers], ids=["body", "headers"])
    def test_the_deadline_stops_a_trickle(self, serve: Callable[..., _LoopbackServer], trickle: Behaviour) -> None:
        """A trickle that would satisfy a 90 s read timeout forever is TIMEOUT at the 0.5 s deadline."""
        server = serve(trickle)
        started = time.monotonic()
        with pytest.raises(TransportFailure) as caught:
            HttpTransport(server.url, FAKE_KEY, deadline=0.5).send(_request("q"))
        assert caught.value.kind is FailureKind.TIMEOUT
        assert 0.45 <= time.monotonic() - started < 3
        assert server.trickled >= 5


class TestParse:
    @pytest.mark.timeout(5)
    @pytest.mark.parametrize(
        "body",
        [
            b"not json",
            b"\xff\xfe{",
            b"[" * 100_000,
            b"[]",
            b'{"choices": []}',
            b'{"choices": ["text"]}',
            b'{"choices": [{"finish_reason": "stop"}]}',
            b'{"choices": [{"message": {"role": "assistant"}, "finish_reason": "stop"}]}',
            b'{"choices": [{"message": {"content": ["part"]}, "finish_reason": "stop"}]}',
            b'{"choices": [{"message": {"content": "x"}, "finish_reason": 7}]}',
            b"",
        ],
        ids=[
            "text",
            "bad-utf8",
            "deep-nesting",
            "list",
            "no-choices",
            "choice-not-object",
            "no-message",
            "no-content",
            "content-not-text",
            "reason-not-text",
            "empty-body",
        ],
    )
    def test_a_body_without_the_completion_shape_is_parse(
        self, serve: Callable[..., _LoopbackServer], body: bytes
    ) -> None:
        """A 2xx body that is not a chat completion raises PARSE."""
        server = serve(_respond(200, body))
        with pytest.raises(TransportFailure) as caught:
            HttpTransport(server.url, FAKE_KEY).send(_request("q"))
        assert caught.value.kind is FailureKind.PARSE

    @pytest.mark.timeout(5)
    @pytest.mark.parametrize(
        ("body", "reply"),
        [
            (_completion(None), Reply(None, "stop")),
            (_completion("x", omit_reason=True), Reply("x", None)),
            (_completion("x", None), Reply("x", None)),
        ],
        ids=["null-content", "missing-reason", "null-reason"],
    )
    def test_missing_parts_of_a_reply_are_left_to_the_session(
        self, serve: Callable[..., _LoopbackServer], body: bytes, reply: Reply
    ) -> None:
        """Null content and a missing finish reason come back as None, not as PARSE."""
        server = serve(_respond(200, body))
        assert HttpTransport(server.url, FAKE_KEY).send(_request("q")) == reply


class TestSecrets:
    @pytest.mark.timeout(5)
    def test_a_500_body_and_the_key_appear_nowhere(
        self,
        serve: Callable[..., _LoopbackServer],
        capsys: pytest.CaptureFixture[str],
        caplog: pytest.LogCaptureFixture,
    ) -> None:
        """Neither the error body's secret nor the key shows in results, exceptions, tracebacks, output or logs."""
        caplog.set_level(logging.DEBUG)
        server = serve(_OK, _respond(500, _SECRET_BODY))
        transport = HttpTransport(server.url, FAKE_KEY)
        chat = TransactionalChat(transport)
        chat.ask("one")
        result = chat.ask("two")
        with pytest.raises(TransportFailure) as caught:
            transport.send(_request("three"))
        assert result.status is AskStatus.HTTP_STATUS and caught.value.status == 500
        assert all(received.headers["Authorization"] == f"Bearer {FAKE_KEY}" for received in server.received)
        captured = capsys.readouterr()
        everything = "\n".join(
            [
                str(result),
                repr(result),
                repr(chat),
                str(caught.value),
                repr(caught.value),
                "".join(traceback.format_exception(caught.value)),
                repr(transport),
                repr(vars(transport)),
                captured.out,
                captured.err,
                caplog.text,
            ]
        )
        assert SECRET not in everything
        assert FAKE_KEY not in everything

    def test_a_bad_key_is_refused_without_showing_it(self) -> None:
        """A key an HTTP header cannot carry is a UsageError whose message does not quote it."""
        with pytest.raises(UsageError) as caught:
            HttpTransport("http://127.0.0.1:1/v1", FAKE_KEY + "\n")
        assert FAKE_KEY not in str(caught.value)
        assert FAKE_KEY not in "".join(traceback.format_exception(caught.value))


class TestConfiguration:
    @pytest.mark.parametrize(
        "url",
        [
            "ftp://127.0.0.1/v1",
            "http://user:pw@127.0.0.1/v1",
            "http://127.0.0.1/v1?key=x",
            "http:///v1",
            "http://127.0.0.1:99999/v1",
            "127.0.0.1:8000",
        ],
        ids=["scheme", "credentials", "query", "no-host", "bad-port", "no-scheme"],
    )
    def test_an_unusable_base_url_is_a_usage_error(self, url: str) -> None:
        """A base URL that is not plain http(s)://host[:port][/path] is refused before any request."""
        with pytest.raises(UsageError):
            HttpTransport(url, FAKE_KEY)

    @pytest.mark.parametrize(
        "options",
        [{"connect_timeout": 0}, {"read_timeout": -1}, {"deadline": 0}, {"max_body_bytes": 0}],
        ids=["connect", "read", "deadline", "cap"],
    )
    def test_limits_must_be_positive(self, options: dict[str, Any]) -> None:
        """A zero or negative limit is a UsageError."""
        with pytest.raises(UsageError):
            HttpTransport("http://127.0.0.1/v1", FAKE_KEY, **options)

    def test_defaults_follow_the_article(self) -> None:
        """Connect 10 s, read 90 s, 256 KiB cap, no deadline; the repr shows them and the endpoint."""
        transport = HttpTransport("https://api.example.com/v1", FAKE_KEY)
        assert (transport.connect_timeout, transport.read_timeout) == (10.0, 90.0)
        assert (transport.max_body_bytes, transport.deadline) == (256 * 1024, None)
        assert repr(transport) == (
            "<HttpTransport https://api.example.com/v1/chat/completions connect=10s read=90s deadline=none>"
        )
