"""The code under study: the two sessions from the articles, the transactional chat and the versioned session.

Its one job is to be the state code a lesson races, exactly as it would run in production: it knows nothing of the
lab beyond the two hooks of :mod:`lab.hooks` (a probe and shared-access notes, no-ops by default) and takes its lock
from the caller. Where a versioned session keeps its state is :mod:`lab.sessions.stores`.
"""

from __future__ import annotations

from lab.sessions.transactional import AskResult, AskStatus, TransactionalChat
from lab.sessions.versioned import CommitStatus, Receipt, Ticket, VersionedSession

__all__ = [
    "AskResult",
    "AskStatus",
    "CommitStatus",
    "Receipt",
    "Ticket",
    "TransactionalChat",
    "VersionedSession",
]
