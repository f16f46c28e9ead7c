# size: the live transport and the socket-level budget that enforces its deadline belong together
"""The live transport: one chat-completions POST over HTTP(S), with timeouts, a body cap and an optional deadline.

It speaks to any OpenAI-compatible endpoint with the standard library's ``http.client`` only, so the lab keeps its
single runtime dependency and every wait is visible here rather than hidden in a client library's retry policy.

What a caller can rely on:

* It sends ``request.body`` byte for byte (the bytes the session's budget measured) and never rewrites it.
* It never retries. One ``send`` is at most one request; deciding to ask again belongs to the user.
* Every wait is bounded: the connect timeout while connecting, the read timeout for every later wait on the
  socket, and, when given, a deadline for the whole call. A read timeout alone is *not* a deadline: it restarts on
  every byte, so a server that trickles one byte at a time could hold a call forever. The deadline is enforced by
  checking the time left before every socket read and write and lowering the socket timeout to it.
* A response body larger than the cap is not read to its end: the call fails with ``IO``.
* An error response's body is never read. The API key lives in an object whose ``repr`` is redacted, and no
  exception raised here names it or carries a response's bytes.

``stream`` asks for the OpenAI-compatible server-sent events (``"stream": true``) and reads them into a candidate
(:mod:`lab.transport.sse`) under the same rules, per chunk and in total: the read timeout for each wait, the
deadline for the whole call, the body cap for all the bytes. A ``request_id`` travels as the ``Idempotency-Key``
header. ``lookup`` asks the provider's record about a request id, when the provider has one (``lookup_path``).
"""

from __future__ import annotations

import http.client
import io
import json
import socket
import ssl
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, TypeVar
from urllib.parse import quote, urlsplit

from lab.errors import UsageError
from lab.messages import ChatRequest
from lab.transport.contract import FailureKind, OnDelta, Reply, ShouldStop, TransportFailure
from lab.transport.sse import read_events
from lab.transport.streaming import Candidate, streaming_request

if TYPE_CHECKING:
    from _typeshed import ReadableBuffer, WriteableBuffer

DEFAULT_CONNECT_TIMEOUT = 10.0
DEFAULT_READ_TIMEOUT = 90.0
DEFAULT_MAX_BODY_BYTES = 256 * 1024
_CHUNK_BYTES = 16 * 1024
T = TypeVar("T")


class HttpTransport:
    """Sends a :class:`ChatRequest` to ``{base_url}/chat/completions`` and returns its :class:`Reply`.

    Each ``send`` opens its own connection and closes it afterwards, so one transport may be shared by many threads
    (the versioned session sends outside its lock). Failures are raised as :class:`TransportFailure`:

    =======================================================  ================
    What happened                                            Kind
    =======================================================  ================
    connect or read timeout, or the deadline passed          ``TIMEOUT``
    HTTP 429                                                 ``HTTP_429``
    any other non-2xx status (the code is kept)              ``HTTP_STATUS``
    refused, reset, TLS failure, body over the cap           ``IO``
    body not JSON, or no ``choices[0].message.content``      ``PARSE``
    =======================================================  ================

    A missing ``finish_reason`` or a ``null`` content is not a transport failure: the reply comes back with
    ``None`` in that field and the session decides (INCOMPLETE, EMPTY).

    >>> HttpTransport("https://api.example.com/v1", "sk-test", deadline=30)
    <HttpTransport https://api.example.com/v1/chat/completions connect=10s read=90s deadline=30s>
    """

    def __init__(
        self,
        base_url: str,
        api_key: str,
        *,
        connect_timeout: float = DEFAULT_CONNECT_TIMEOUT,
        read_timeout: float = DEFAULT_READ_TIMEOUT,
        deadline: float | None = None,
        max_body_bytes: int = DEFAULT_MAX_BODY_BYTES,
        ssl_context: ssl.SSLContext | None = None,
        lookup_path: str | None = None,
    ) -> None:
        for name, value in (("connect_timeout", connect_timeout), ("read_timeout", read_timeout)):
            if not value > 0:
                raise UsageError(f"{name} must be a positive number of seconds, not {value!r}")
        if deadline is not None and not deadline > 0:
            raise UsageError(f"deadline must be a positive number of seconds or None, not {deadline!r}")
        if max_body_bytes < 1:
            raise UsageError(f"max_body_bytes must be at least 1, not {max_body_bytes!r}")
        if lookup_path is not None and (not lookup_path.startswith("/") or not lookup_path.isascii()):
            raise UsageError("lookup_path is an ASCII path below the base URL starting with /, e.g. /requests")
        self._tls, self._host, self._port, self._path = _split_base_url(base_url)
        self._lookup = None if lookup_path is None else self._path.removesuffix("/chat/completions") + lookup_path
        self._key = _Secret(api_key)
        self.connect_timeout = connect_timeout
        self.read_timeout = read_timeout
        self.deadline = deadline
        self.max_body_bytes = max_body_bytes
        self._ssl_context = ssl_context
        if self._tls and ssl_context is None:
            self._ssl_context = ssl.create_default_context()

    @property
    def url(self) -> str:
        """The endpoint this transport posts to (safe to show: it never holds credentials)."""
        scheme = "https" if self._tls else "http"
        host = f"[{self._host}]" if ":" in self._host else self._host
        return f"{scheme}://{host}:{self._port}{self._path}" if self._port else f"{scheme}://{host}{self._path}"

    @property
    def can_reconcile(self) -> bool:
        """True when the provider has a record to ask (``lookup_path`` was given)."""
        return self._lookup is not None

    def send(self, request: ChatRequest, *, request_id: str | None = None) -> Reply:
        """POST ``request.body`` once and return the reply, or raise :class:`TransportFailure` with its kind.

        Lower-level exceptions are replaced, not chained (``from None``): their text may quote bytes the server
        sent, and the contract says a failure carries its kind and status code only.
        """
        body = self._call("POST", self._path, request.body, _headers(request_id), self._read_body)
        return _parse_completion(body)

    def stream(
        self,
        request: ChatRequest,
        *,
        on_delta: OnDelta | None = None,
        should_stop: ShouldStop | None = None,
        request_id: str | None = None,
    ) -> Reply:
        """POST the request asking for a stream and read its events; the finished reply, or a failure.

        A request that does not ask for a stream yet is given ``"stream":true`` (:func:`streaming_request`); a
        session that measures its budget builds the streaming request itself, so what it measured is what is sent.
        The socket is closed however the call ends: finished, failed, stopped, or interrupted (Ctrl-C).
        """

        def read(response: http.client.HTTPResponse) -> Reply:
            if not (response.getheader("Content-Type") or "").startswith("text/event-stream"):
                return _parse_completion(self._read_body(response))  # the service answered whole after all
            candidate = Candidate(self.max_body_bytes)
            return read_events(response, candidate, on_delta=on_delta, should_stop=should_stop)

        body = streaming_request(request).body
        return self._call("POST", self._path, body, _headers(request_id, accept="text/event-stream"), read)

    def lookup(self, request_id: str) -> Reply | None:
        """GET ``{base_url}{lookup_path}/{request_id}``: the provider's finished reply (a chat-completion body), or
        ``None`` on 404 or when there is no ``lookup_path`` (nothing is sent then). Other statuses fail as usual."""
        if self._lookup is None:
            return None
        path = f"{self._lookup}/{quote(request_id, safe='')}"
        try:
            body = self._call("GET", path, None, _headers(None), self._read_body)
        except TransportFailure as failure:
            if failure.status == 404:
                return None
            raise
        return _parse_completion(body)

    def _read_body(self, response: http.client.HTTPResponse) -> bytes:
        return _read_capped(response, self.max_body_bytes)

    def _call(
        self,
        method: str,
        path: str,
        body: bytes | None,
        headers: dict[str, str],
        read: Callable[[http.client.HTTPResponse], T],
    ) -> T:
        """One exchange within one budget; socket-level errors become ``TIMEOUT`` or ``IO``."""
        budget = _Budget(self.deadline)
        try:
            return self._exchange(method, path, body, {**headers, "Authorization": self._key.bearer()}, budget, read)
        except TimeoutError:
            raise TransportFailure(FailureKind.TIMEOUT) from None
        except (OSError, http.client.HTTPException):
            raise TransportFailure(FailureKind.IO) from None

    def _exchange(
        self,
        method: str,
        path: str,
        body: bytes | None,
        headers: dict[str, str],
        budget: _Budget,
        read: Callable[[http.client.HTTPResponse], T],
    ) -> T:
        connection = self._connection(budget.wait(self.connect_timeout))
        response: http.client.HTTPResponse | None = None
        try:
            connection.connect()
            connection.sock = _BudgetedSocket(connection.sock, budget, self.read_timeout)
            connection.request(method, path, body=body, headers=headers)
            response = connection.getresponse()
            if response.status == 429:
                raise TransportFailure(FailureKind.HTTP_429)
            if not 200 <= response.status < 300:
                raise TransportFailure(FailureKind.HTTP_STATUS, response.status)
            return read(response)
        finally:
            if response is not None:
                response.close()
            connection.close()

    def _connection(self, timeout: float) -> http.client.HTTPConnection:
        if self._tls:
            return http.client.HTTPSConnection(self._host, self._port, timeout=timeout, context=self._ssl_context)
        return http.client.HTTPConnection(self._host, self._port, timeout=timeout)

    def __repr__(self) -> str:
        deadline = "none" if self.deadline is None else f"{self.deadline:g}s"
        return (
            f"<HttpTransport {self.url} connect={self.connect_timeout:g}s read={self.read_timeout:g}s"
            f" deadline={deadline}>"
        )


class _Secret:
    """Holds the API key so that no ``repr``, ``str`` or attribute dump of the transport can show it."""

    __slots__ = ("_value",)

    def __init__(self, value: str) -> None:
        # Checked here because http.client would otherwise reject a bad header value with a message quoting it.
        if not value or not all(0x21 <= ord(character) <= 0x7E for character in value):
            raise UsageError("the API key must be non-empty printable ASCII without spaces (its value is not shown)")
        self._value = value

    def bearer(self) -> str:
        """The ``Authorization`` header value."""
        return f"Bearer {self._value}"

    def __repr__(self) -> str:
        return "<redacted>"

    __str__ = __repr__


class _Budget:
    """The time one call may still spend: each wait is capped by its own timeout and by the call's deadline."""

    def __init__(self, deadline: float | None) -> None:
        self._ends = None if deadline is None else time.monotonic() + deadline

    def wait(self, timeout: float) -> float:
        """The socket timeout for the next wait; raises ``TimeoutError`` once the deadline has passed."""
        if self._ends is None:
            return timeout
        remaining = self._ends - time.monotonic()
        if remaining <= 0:
            raise TimeoutError("the request's deadline has passed")
        return min(timeout, remaining)


class _BudgetedSocket:
    """The connected socket as ``http.client`` sees it: every write and read first asks the budget how long to wait.

    Wrapping the socket (rather than checking the clock between ``http.client`` calls) puts the check before every
    single ``recv``, so a server that trickles its status line or headers is stopped by the deadline too.
    """

    def __init__(self, sock: socket.socket, budget: _Budget, timeout: float) -> None:
        self._sock = sock
        self._budget = budget
        self._timeout = timeout

    def sendall(self, data: ReadableBuffer) -> None:
        """Send everything, within the read timeout and what is left of the deadline."""
        self._sock.settimeout(self._budget.wait(self._timeout))
        self._sock.sendall(data)

    def makefile(self, mode: str = "rb") -> io.BufferedReader:
        """The response stream ``http.client`` reads the status line, headers and body from."""
        if mode != "rb":  # an invariant, not a user's mistake: http.client only ever asks for "rb"
            raise ValueError(f"only mode 'rb' is supported, not {mode!r}")
        return io.BufferedReader(_BudgetedReader(self._sock, self._budget, self._timeout))

    def close(self) -> None:
        """Close the socket (the operating system closes it once the response stream is closed too)."""
        self._sock.close()


class _BudgetedReader(io.RawIOBase):
    """A raw socket stream that sets the socket timeout from the budget before each ``recv``."""

    def __init__(self, sock: socket.socket, budget: _Budget, timeout: float) -> None:
        super().__init__()
        self._raw = sock.makefile("rb", buffering=0)
        self._sock = sock
        self._budget = budget
        self._timeout = timeout

    def readable(self) -> bool:
        """Always true: this stream only reads."""
        return True

    def readinto(self, buffer: WriteableBuffer) -> int | None:
        """Read at most ``len(buffer)`` bytes, waiting no longer than the budget allows."""
        self._sock.settimeout(self._budget.wait(self._timeout))
        return self._raw.readinto(buffer)

    def close(self) -> None:
        """Release the socket stream (the socket itself closes once no stream uses it)."""
        if not self.closed:
            self._raw.close()
        super().close()


def _headers(request_id: str | None, *, accept: str = "application/json") -> dict[str, str]:
    """The headers of every request but the key's; a request id travels as the idempotency key."""
    headers = {
        "Content-Type": "application/json",
        "Accept": accept,
        "Connection": "close",
        "User-Agent": "concurrency-lab",
    }
    if request_id is not None:
        if not request_id.isascii() or not request_id.isprintable():
            raise UsageError("a request id sent as Idempotency-Key must be printable ASCII")
        headers["Idempotency-Key"] = request_id
    return headers


def _split_base_url(base_url: str) -> tuple[bool, str, int | None, str]:
    """``(tls, host, port, path)`` for a base URL; rejects what would be unsafe to print or to send to."""
    if not base_url.isascii() or any(character.isspace() for character in base_url):
        raise UsageError("the base URL must be ASCII without spaces (percent-encode or punycode it)")
    parts = urlsplit(base_url)
    if parts.scheme.lower() not in ("http", "https"):
        raise UsageError(f"the base URL must start with http:// or https://, not {parts.scheme or 'nothing'}://")
    if parts.username is not None or parts.password is not None:
        raise UsageError("the base URL must not carry credentials; pass the API key on its own")
    if parts.query or parts.fragment:
        raise UsageError("the base URL must not carry a query or fragment; give it up to the path, e.g. .../v1")
    if not parts.hostname:
        raise UsageError("the base URL has no host, e.g. https://api.example.com/v1")
    try:
        port = parts.port
    except ValueError:
        raise UsageError("the base URL's port is not a number between 0 and 65535") from None
    return parts.scheme.lower() == "https", parts.hostname, port, parts.path.rstrip("/") + "/chat/completions"


def _read_capped(response: http.client.HTTPResponse, cap: int) -> bytes:
    """The body, read in chunks; stops and fails with ``IO`` as soon as it is known to exceed ``cap``."""
    if response.length is not None and response.length > cap:
        raise TransportFailure(FailureKind.IO)
    body = bytearray()
    while chunk := response.read(min(_CHUNK_BYTES, cap + 1 - len(body))):
        body += chunk
        if len(body) > cap:
            raise TransportFailure(FailureKind.IO)
    return bytes(body)


def _parse_completion(body: bytes) -> Reply:
    """The reply in a chat-completions body, or ``PARSE`` when the body is not one.

    Only the shape is checked. Whether the content is usable (not empty, finished with ``stop``) is the session's
    decision, so ``null`` content and a missing ``finish_reason`` come back as ``None``.
    """
    try:
        document = json.loads(body)
    except (ValueError, RecursionError):
        raise TransportFailure(FailureKind.PARSE) from None
    choices = document.get("choices") if isinstance(document, dict) else None
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
        raise TransportFailure(FailureKind.PARSE)
    choice = choices[0]
    message = choice.get("message")
    if not isinstance(message, dict) or "content" not in message:
        raise TransportFailure(FailureKind.PARSE)
    content = message["content"]
    finish_reason = choice.get("finish_reason")
    if not isinstance(content, str | None) or not isinstance(finish_reason, str | None):
        raise TransportFailure(FailureKind.PARSE)
    return Reply(content, finish_reason)
