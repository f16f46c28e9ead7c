"""Where a versioned session keeps its state: in the session object (memory), in SQLite, or in PostgreSQL.

Article 003's session keeps version, history and receipts in memory, so "an evicted receipt or a process restart
forgets the request id", and an in-process lock protects nothing once several worker processes serve one session.
A durable store moves the state into a database and the version check into the database too, as a
compare-and-set::

    UPDATE lab_sessions SET version = version + 1, history = ? WHERE key = ? AND version = ?   -- 0 rows: STALE

A store is what :class:`~lab.sessions.versioned.VersionedSession` talks to when it is given ``store=``; without
one the session object itself is the state, exactly as before (the *memory* store). Every store offers the same
few operations, each one database transaction, each announced to the lab's explorer with
:func:`lab.hooks.note_shared_access` (the explorer cannot see into a database: two actors' commits to
one row on two connections would otherwise look independent):

- :meth:`Store.open_session` finds the session's row by name, or creates it with a fresh random ``key``. The key is
  the durable session's identity: tickets carry it, so ownership stays checkable across processes and restarts,
  and two databases that both hold a session named ``s1`` still hold two sessions.
- :meth:`Store.read` reads version, history and the receipt of one request id in one statement (one snapshot).
- :meth:`Store.commit_round` is the commit: receipt lookup, then the compare-and-set on the version, the new
  history (pair appended, old rounds trimmed, computed by the session from the snapshot it read, which the
  compare-and-set proves is still current), the receipt stored and the oldest evicted. False when another commit
  got there first: the session then reads again and decides again (STALE, or DUPLICATE for the same request).
- :meth:`OneStepStore.commit_ticket` (PostgreSQL) is the whole commit in one round trip: the session sends the
  ticket, and the server reads, decides and writes or refuses in one statement, with no read before it.
- :meth:`Store.overwrite` writes without the compare-and-set. It is the mistake article 003 warns about, kept only
  for the mutant that shows the lost update (:class:`lab.mutants.InProcessLockSession`).

The schema is created on first use and versioned (:data:`SCHEMA_VERSION`, table ``lab_schema``); a database with
another schema version is refused with a :class:`StoreError` instead of being misread. See ``docs/stores.md``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from lab.sessions.stores.failures import check_text, kept_by_every_store
from lab.sessions.stores.scratch import SCRATCH_VARIABLE, scratch_base, scratch_database
from lab.sessions.stores.sqlite import SqliteStore
from lab.sessions.stores.store import (
    POSTGRES_URL_VARIABLE,
    SCHEMA_VERSION,
    OneStepStore,
    RowState,
    Store,
    StoreError,
    lesson_postgres_url,
    open_store,
    store_label,
    stores_used,
)

if TYPE_CHECKING:
    from lab.sessions.stores.postgres import PostgresStore


def __getattr__(name: str) -> Any:
    """``PostgresStore`` is imported on first use: psycopg, which it imports, costs every process that imports the
    lab tens of milliseconds, and most use only SQLite or memory (the isolation worker imports it before a run of
    a scenario that names PostgreSQL, since psycopg must bind the real ``threading.Lock``)."""
    if name == "PostgresStore":
        from lab.sessions.stores.postgres import PostgresStore

        return PostgresStore
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "POSTGRES_URL_VARIABLE",
    "SCHEMA_VERSION",
    "SCRATCH_VARIABLE",
    "OneStepStore",
    "PostgresStore",
    "RowState",
    "SqliteStore",
    "Store",
    "StoreError",
    "check_text",
    "kept_by_every_store",
    "lesson_postgres_url",
    "open_store",
    "scratch_base",
    "scratch_database",
    "store_label",
    "stores_used",
]
