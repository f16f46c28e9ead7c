"""A deterministic concurrency lab: race a slow and a fast request on one chat session, repeatably.

These are the names a lesson needs, and a scenario file imports from ``lab`` only: the scenario API (``Scenario``,
``@actor``, the outcome table, pins), the code under study (messages, sessions, their mutants, the stores, the
transports) and the lab's errors. The machinery that runs a lesson (the scheduler, its policies, the explorer, the
evidence writer) is not here: it lives in its own packages, and a lesson never touches it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from lab.engine.core import Granularity
from lab.engine.sync import Barrier, Event, LabLock, Latch
from lab.errors import LabError, ScenarioError, ScheduleError, UsageError
from lab.messages import DEFAULT_MODEL, DEFAULT_SYSTEM_PROMPT, ChatRequest, Message, Role, is_whole_pairs
from lab.mutants import (
    DURABLE_VARIANTS,
    VERSIONED_VARIANTS,
    BumpBeforeValidationSession,
    CheckOutsideLockSession,
    InProcessLockSession,
    LiveHistoryTicketSession,
    ReceiptsAfterVersionSession,
    TrimByMessageSession,
    UnlockedSession,
)
from lab.scenarios.base import Lab, Pin, Scenario, actor
from lab.scenarios.outcomes import (
    Grade,
    Outcome,
    acceptable,
    chat_state,
    forbidden,
    interesting,
    only,
    versioned_state,
)
from lab.scenarios.pinning import pinned_scenario
from lab.sessions.stores import POSTGRES_URL_VARIABLE, StoreError, lesson_postgres_url, scratch_database
from lab.sessions.stores.sqlite import SqliteStore
from lab.sessions.transactional import AskResult, AskStatus, TransactionalChat
from lab.sessions.versioned import CommitStatus, Ticket, VersionedSession
from lab.transport.contract import FailureKind, Reply, Transport, TransportFailure
from lab.transport.scripted import Held, Pause, ScriptedTransport, Stream, StreamEnd, replies

if TYPE_CHECKING:
    from lab.sessions.stores.postgres import PostgresStore

__version__ = "0.1.0"


def __getattr__(name: str) -> Any:
    """``PostgresStore`` on first use (``from lab import PostgresStore`` included): importing it imports psycopg,
    tens of milliseconds that a process using only SQLite or memory does not pay (:mod:`lab.sessions.stores`)."""
    if name == "PostgresStore":
        from lab.sessions.stores.postgres import PostgresStore

        return PostgresStore
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "DEFAULT_MODEL",
    "DEFAULT_SYSTEM_PROMPT",
    "DURABLE_VARIANTS",
    "POSTGRES_URL_VARIABLE",
    "VERSIONED_VARIANTS",
    "AskResult",
    "AskStatus",
    "Barrier",
    "BumpBeforeValidationSession",
    "ChatRequest",
    "CheckOutsideLockSession",
    "CommitStatus",
    "Event",
    "FailureKind",
    "Grade",
    "Granularity",
    "Held",
    "InProcessLockSession",
    "Lab",
    "LabError",
    "LabLock",
    "Latch",
    "LiveHistoryTicketSession",
    "Message",
    "Outcome",
    "Pause",
    "Pin",
    "PostgresStore",
    "ReceiptsAfterVersionSession",
    "Reply",
    "Role",
    "Scenario",
    "ScenarioError",
    "ScheduleError",
    "ScriptedTransport",
    "SqliteStore",
    "StoreError",
    "Stream",
    "StreamEnd",
    "Ticket",
    "TransactionalChat",
    "Transport",
    "TransportFailure",
    "TrimByMessageSession",
    "UnlockedSession",
    "UsageError",
    "VersionedSession",
    "__version__",
    "acceptable",
    "actor",
    "chat_state",
    "forbidden",
    "interesting",
    "is_whole_pairs",
    "lesson_postgres_url",
    "only",
    "pinned_scenario",
    "replies",
    "scratch_database",
    "versioned_state",
]
