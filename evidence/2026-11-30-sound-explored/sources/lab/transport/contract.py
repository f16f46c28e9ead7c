"""What a transport promises: a :class:`Reply`, or a :class:`TransportFailure` of a known kind.

Sessions never see sockets or status lines. Whatever the transport (the scripted double or real HTTP), a call ends
in one of two ways, and the failure kinds are the rows of article 000's reply table that the wire can produce.
Validating the reply (empty content, a finish reason other than ``stop``) is the *session's* job, not the
transport's: the transport reports what came back, the session decides whether it may be committed.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Protocol

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
