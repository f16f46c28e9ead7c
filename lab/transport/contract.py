"""What a transport promises: a :class:`Reply`, or a :class:`TransportFailure` of a known kind.

Sessions never see sockets or status lines. Whatever the transport (the scripted double or real HTTP), a call ends
in one of two ways, and the failure kinds are the rows of article 000's reply table that the wire can produce.
Validating the reply (empty content, a finish reason other than ``stop``) is the *session's* job, not the
transport's: the transport reports what came back, the session decides whether it may be committed.

A streamed reply keeps the same promise (:class:`StreamingTransport`): its chunks go into a candidate, and only a
stream that *ended* (a finish event, or the end-of-stream marker) comes back as a :class:`Reply`. A stream cut,
over its budget, past its deadline or stopped by the caller raises, so a session can never commit half a stream.
A request that timed out or was cancelled has an *unknown* fate at the provider; a transport that can ask the
provider's record about it (by the request id it sent) is :class:`Reconcilable`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from enum import StrEnum
from typing import Protocol, runtime_checkable

from lab.errors import LabError
from lab.messages import ChatRequest


class FailureKind(StrEnum):
    """Why a transport call produced no reply."""

    TIMEOUT = "TIMEOUT"
    """No answer in time: the connect or read timeout, or the overall deadline."""
    HTTP_429 = "HTTP_429"
    """The service said "too many requests"."""
    HTTP_STATUS = "HTTP_STATUS"
    """Any other non-2xx status; the code is kept, the body never is."""
    IO = "IO"
    """The connection failed or broke, or the body exceeded its size cap."""
    PARSE = "PARSE"
    """The body was not JSON, or lacked the fields a chat completion has."""
    CANCELLED = "CANCELLED"
    """The caller stopped waiting (a user's stop, or a session that knows the answer would be refused)."""


UNKNOWN_FATE = frozenset({FailureKind.TIMEOUT, FailureKind.CANCELLED})
"""The failures after which the provider may still have finished and billed the request (article 000, section 8:
a read timeout cannot prove the service did not process it). Their outcome is unknown, not failed."""


@dataclass(frozen=True, slots=True)
class Reply:
    """What the model sent back: its text and why it stopped (``None`` when the service omitted it)."""

    content: str | None
    finish_reason: str | None = "stop"


class TransportFailure(LabError):
    """Raised by ``Transport.send`` when no reply came back.

    The message names the kind (and the HTTP code) only: a response body may hold secrets or prompts, so it is
    never carried in an exception.
    """

    def __init__(self, kind: FailureKind, status: int | None = None) -> None:
        self.kind = FailureKind(kind)
        self.status = status
        super().__init__(f"{self.kind}" + (f" ({status})" if status is not None else ""))

    def __repr__(self) -> str:
        return f"TransportFailure({self.kind}, status={self.status})"


class Transport(Protocol):
    """Anything that can send one chat request and wait for its reply."""

    def send(self, request: ChatRequest) -> Reply:
        """Send ``request.body``; return the reply or raise :class:`TransportFailure`."""
        ...


OnDelta = Callable[[str], None]
"""Called with each piece of text as it arrives (to show a reply while it streams)."""

ShouldStop = Callable[[], bool]
"""Asked after each chunk: true means "stop now" (the transport abandons the stream and raises ``CANCELLED``)."""


@runtime_checkable
class StreamingTransport(Protocol):
    """A transport that can also receive a reply as a stream of chunks.

    ``stream`` returns only a stream that ended (its whole text and its finish reason); a cut stream is ``IO``, a
    stream past the size budget ``IO``, past the deadline ``TIMEOUT``, stopped by ``should_stop`` ``CANCELLED``.
    ``request_id``, when given, travels to the provider as the request's idempotency key.
    """

    def send(self, request: ChatRequest) -> Reply:
        """Send ``request.body``; return the reply or raise :class:`TransportFailure`."""
        ...

    def stream(
        self,
        request: ChatRequest,
        *,
        on_delta: OnDelta | None = None,
        should_stop: ShouldStop | None = None,
        request_id: str | None = None,
    ) -> Reply:
        """Send ``request.body`` asking for a stream; return the finished reply or raise :class:`TransportFailure`."""
        ...


@runtime_checkable
class Reconcilable(Protocol):
    """A transport that can ask the provider's own record what became of a request, by its request id."""

    @property
    def can_reconcile(self) -> bool:
        """False when the provider offers no record to ask: then every lookup answers ``None``, sent nowhere."""
        ...

    def lookup(self, request_id: str) -> Reply | None:
        """The reply the provider finished for ``request_id``, or ``None`` when it has none (never received, not
        finished, or no record to ask). A lookup is not a request: it generates nothing and bills nothing."""
        ...
