"""Transports: how a session's request reaches a model, behind one contract.

Its one job is the wire: :class:`Transport` turns a :class:`~lab.messages.ChatRequest` into a :class:`Reply` or a
:class:`TransportFailure` of a known kind, whole or as a stream (:class:`StreamingTransport`, whose chunks go into a
:class:`Candidate` that is a reply only once it ended). The scripted double answers lessons from a script and keeps
the provider's :class:`Journal` (what was billed and finished, for reconciliation), the offline double plays the
chat console without a network, and :class:`HttpTransport` is the live path.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from lab.transport.contract import (
    UNKNOWN_FATE,
    FailureKind,
    OnDelta,
    Reconcilable,
    Reply,
    ShouldStop,
    StreamingTransport,
    Transport,
    TransportFailure,
)
from lab.transport.journal import Entry, Journal
from lab.transport.offline import OFFLINE_COMMANDS, OfflineTransport
from lab.transport.scripted import Held, Pause, ScriptedTransport, Step, Stream, StreamEnd, replies
from lab.transport.streaming import DEFAULT_MAX_STREAM_BYTES, Candidate, StreamingRequest, streaming_request

if TYPE_CHECKING:
    from lab.transport.http import HttpTransport


def __getattr__(name: str) -> Any:
    """``HttpTransport`` on first use: the live path imports ``http.client`` (and with it ``ssl`` and the email
    parser, tens of milliseconds) that lessons, runs and audits never use."""
    if name == "HttpTransport":
        from lab.transport.http import HttpTransport

        return HttpTransport
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "DEFAULT_MAX_STREAM_BYTES",
    "OFFLINE_COMMANDS",
    "UNKNOWN_FATE",
    "Candidate",
    "Entry",
    "FailureKind",
    "Held",
    "HttpTransport",
    "Journal",
    "OfflineTransport",
    "OnDelta",
    "Pause",
    "Reconcilable",
    "Reply",
    "ScriptedTransport",
    "ShouldStop",
    "Step",
    "Stream",
    "StreamEnd",
    "StreamingRequest",
    "StreamingTransport",
    "Transport",
    "TransportFailure",
    "replies",
    "streaming_request",
]
