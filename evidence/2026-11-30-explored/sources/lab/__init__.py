"""A deterministic concurrency lab: race a slow and a fast request on one chat session, repeatably.

The public names live here; scenario files import from ``lab`` only.
"""

from __future__ import annotations

from lab.engine.primitives import Barrier, Event, LabLock, Latch
from lab.engine.scheduler import KeepCurrent, Policy, RunStatus, Scheduler
from lab.errors import EvidenceError, LabError, ScenarioError, ScheduleError, UsageError
from lab.messages import DEFAULT_MODEL, DEFAULT_SYSTEM_PROMPT, ChatRequest, Message, Role, is_whole_pairs
from lab.scenarios.base import (
    Grade,
    Lab,
    Outcome,
    Scenario,
    acceptable,
    chat_state,
    forbidden,
    interesting,
    versioned_state,
)
from lab.scenarios.pinning import pinned_scenario
from lab.sessions.transactional import AskResult, AskStatus, TransactionalChat
from lab.sessions.versioned import CommitStatus, Ticket, VersionedSession
from lab.transport.contract import FailureKind, Reply, Transport, TransportFailure
from lab.transport.scripted import Held, ScriptedTransport, replies

__version__ = "0.1.0"

__all__ = [
    "DEFAULT_MODEL",
    "DEFAULT_SYSTEM_PROMPT",
    "AskResult",
    "AskStatus",
    "Barrier",
    "ChatRequest",
    "CommitStatus",
    "Event",
    "EvidenceError",
    "FailureKind",
    "Grade",
    "Held",
    "KeepCurrent",
    "Lab",
    "LabError",
    "LabLock",
    "Latch",
    "Message",
    "Outcome",
    "Policy",
    "Reply",
    "Role",
    "RunStatus",
    "Scenario",
    "ScenarioError",
    "ScheduleError",
    "Scheduler",
    "ScriptedTransport",
    "Ticket",
    "TransactionalChat",
    "Transport",
    "TransportFailure",
    "UsageError",
    "VersionedSession",
    "__version__",
    "acceptable",
    "chat_state",
    "forbidden",
    "interesting",
    "is_whole_pairs",
    "pinned_scenario",
    "replies",
    "versioned_state",
]
