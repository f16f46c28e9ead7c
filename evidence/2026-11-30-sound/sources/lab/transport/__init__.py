"""Transports: how a session's request reaches a model, behind one contract.

Its one job is the wire: :class:`Transport` turns a :class:`~lab.messages.ChatRequest` into a :class:`Reply` or a
:class:`TransportFailure` of a known kind. The scripted double answers lessons from a script, the offline double
plays the chat console without a network, and :class:`HttpTransport` is the live path.
"""

from __future__ import annotations

from lab.transport.contract import FailureKind, Reply, Transport, TransportFailure
from lab.transport.http import HttpTransport
from lab.transport.offline import OFFLINE_COMMANDS, OfflineTransport
from lab.transport.scripted import Held, ScriptedTransport, Step, replies

__all__ = [
    "OFFLINE_COMMANDS",
    "FailureKind",
    "Held",
    "HttpTransport",
    "OfflineTransport",
    "Reply",
    "ScriptedTransport",
    "Step",
    "Transport",
    "TransportFailure",
    "replies",
]
