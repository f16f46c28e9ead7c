"""The PostgreSQL store: sessions shared by worker processes on several machines, through psycopg 3.

Same tables and transactions as the SQLite store (``lab_schema``, ``lab_sessions``, ``lab_receipts``), created on
first use under an advisory lock so that two processes starting together do not race on ``CREATE TABLE``. One
connection per store object (per worker), in autocommit mode with explicit transactions at READ COMMITTED.

**Row locks.** A commit locks its session's row (``SELECT ... FOR UPDATE``) before the receipt lookup and the
compare-and-set. It first asks with ``NOWAIT``; when another transaction holds the row it counts a lock wait
(``lock_waits``, the number the benchmark reports) and then waits for it for real.

**In the lab.** A database call that blocks on another actor must be a wait the scheduler sees, never a thread
stuck in C (the watchdog would call it HUNG). The lab never parks an actor inside a transaction, so two actors'
transactions cannot overlap, except in the lesson that holds a row on purpose (``row_lock_wait``). That lesson
gives every worker's store the same ``row_lock``: a lock the scheduler sees (``self.lab.lock("row ...")``) that
stands for PostgreSQL's lock on that row. A store takes it before it locks the row and gives it back after the
transaction ends, so a worker that would wait inside the server waits on that lock instead, and the trace and a
deadlock report name who holds the row. The statement itself then runs with ``NOWAIT``: if the server still
finds the row locked, something outside the lab holds it, and that is a :class:`StoreError`, not a hang. Before
waiting, the store asks the server once (``NOWAIT``) and counts the refusal in ``lock_waits``: the server's own
word that the wait is real.
"""

from __future__ import annotations

import contextlib
import secrets
from collections.abc import Iterator
from typing import Any, Protocol
from urllib.parse import urlsplit, urlunsplit

from lab.hooks import note_shared_access
from lab.sessions.stores.commits import SqlCommits
from lab.sessions.stores.store import SCHEMA_VERSION, RowState, StoreError, access_name, row_state
from lab.sessions.stores.store import row_name as _row

try:  # imported here, at import time: psycopg binds threading.Lock when it is first imported, and must get the real one
    import psycopg
    from psycopg import errors as _errors
except ImportError:  # pragma: no cover - exercised only where the optional dependency is missing
    psycopg = None  # type: ignore[assignment]
    _errors = None  # type: ignore[assignment]

_SCHEMA_LOCK = 0x1AB5E55  # the advisory lock id under which the tables are created
_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS lab_schema (version INTEGER NOT NULL)",
    "CREATE TABLE IF NOT EXISTS lab_sessions (name TEXT PRIMARY KEY, key TEXT NOT NULL UNIQUE,"
    " version INTEGER NOT NULL DEFAULT 0, history TEXT NOT NULL DEFAULT '[]')",
    "CREATE TABLE IF NOT EXISTS lab_receipts (session TEXT NOT NULL REFERENCES lab_sessions(key) ON DELETE CASCADE,"
    " request_id TEXT NOT NULL, seq INTEGER NOT NULL, question TEXT NOT NULL, answer TEXT NOT NULL,"
    " PRIMARY KEY (session, request_id))",
    "CREATE INDEX IF NOT EXISTS lab_receipts_by_seq ON lab_receipts (session, seq)",
)


class RowLockModel(Protocol):
    """A lock the scheduler sees, standing for PostgreSQL's lock on a row (``self.lab.lock("row s1")``)."""

    def acquire(self) -> bool: ...

    def release(self) -> None: ...

    def locked(self) -> bool: ...


def available() -> bool:
    """True when psycopg 3 is installed (``pip install 'concurrency-lab[postgres]'``)."""
    return psycopg is not None


def public_url(url: str) -> str:
    """``url`` without its password: what a banner, a label or evidence may show."""
    parts = urlsplit(url)
    if parts.password is None:
        return url
    netloc = parts.netloc.rsplit("@", 1)
    user = (parts.username or "") + "@" if parts.username else ""
    return urlunsplit((parts.scheme, user + netloc[-1], parts.path, parts.query, parts.fragment))


class PostgresStore(SqlCommits):
    """Sessions in one PostgreSQL database. ``name`` is what the explorer and evidence call it (default: the URL,
    less any password); ``row_lock`` is the lab's picture of the row lock (see the module docstring). With
    ``reuse=SLOT`` the store takes this process's kept connection for ``(url, SLOT)`` when it is idle, and keeps a
    new one there otherwise: lessons reuse one connection per worker across the runs of an exploration."""

    RECEIPT_TAKEN = "SELECT 1 FROM lab_receipts WHERE session = %s AND request_id = %s"
    COMPARE_AND_SET = "UPDATE lab_sessions SET version = version + 1, history = %s WHERE key = %s AND version = %s"
    OVERWRITE = "UPDATE lab_sessions SET version = %s, history = %s WHERE key = %s"
    STORE_RECEIPT = (
        "INSERT INTO lab_receipts (session, request_id, seq, question, answer) VALUES (%s, %s, %s, %s, %s)"
        " ON CONFLICT (session, request_id) DO UPDATE SET seq = EXCLUDED.seq, question = EXCLUDED.question,"
        " answer = EXCLUDED.answer"
    )
    EVICT_RECEIPTS = "DELETE FROM lab_receipts WHERE session = %s AND seq <= %s"

    def __init__(
        self,
        url: str,
        *,
        name: str | None = None,
        row_lock: RowLockModel | None = None,
        connect_timeout: float = 5.0,
        reuse: str | None = None,
    ) -> None:
        if psycopg is None:
            raise StoreError("the PostgreSQL store needs psycopg 3: pip install 'concurrency-lab[postgres]'")
        self._label = name if name is not None else public_url(url)
        self._row_lock = row_lock
        self._holding = False
        self._reused = reuse is not None
        self.lock_waits = 0
        try:
            kept = _kept.get((url, reuse)) if reuse is not None else None
            if kept is not None and not kept.closed and kept.info.transaction_status == _IDLE:
                self._db: Any = kept  # this process's connection for that slot: the schema is known to be there
                return
            self._db = psycopg.connect(url, autocommit=True, connect_timeout=max(1, int(connect_timeout)))
            self._ensure_schema()
            if reuse is not None:
                _kept[(url, reuse)] = self._db
        except psycopg.Error as error:
            raise StoreError(
                f"cannot use {public_url(url)} as a PostgreSQL store: "
                f"{str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__}"
            ) from None

    @property
    def label(self) -> str:
        """``postgresql://user@host:port/db``, or the name given."""
        return self._label

    def _ensure_schema(self) -> None:
        found = self._db.execute("SELECT to_regclass('lab_schema') IS NOT NULL").fetchone()[0]
        if found:
            row = self._db.execute("SELECT version FROM lab_schema").fetchone()
            if row is not None and row[0] == SCHEMA_VERSION:
                return
        with self._db.transaction():
            self._db.execute("SELECT pg_advisory_xact_lock(%s)", (_SCHEMA_LOCK,))
            for statement in _SCHEMA:
                self._db.execute(statement)
            row = self._db.execute("SELECT version FROM lab_schema").fetchone()
            if row is None:
                self._db.execute("INSERT INTO lab_schema (version) VALUES (%s)", (SCHEMA_VERSION,))
            elif row[0] != SCHEMA_VERSION:
                raise StoreError(
                    f"{self._label} holds lab tables of schema version {row[0]}; this lab knows "
                    f"version {SCHEMA_VERSION}"
                )

    def open_session(self, name: str) -> str:
        """The key of session ``name``, creating its row on first use."""
        note_shared_access(access_name(self._label), _row(name), "w")
        self._db.execute(
            "INSERT INTO lab_sessions (name, key) VALUES (%s, %s) ON CONFLICT (name) DO NOTHING",
            (name, secrets.token_hex(16)),
        )
        return str(self._db.execute("SELECT key FROM lab_sessions WHERE name = %s", (name,)).fetchone()[0])

    def read(self, key: str, name: str, request_id: str | None = None) -> RowState:
        """Version, history and one receipt in one statement (one snapshot, and no row lock: readers never wait)."""
        note_shared_access(access_name(self._label), _row(name), "r")
        row = self._db.execute(
            "SELECT s.version, s.history, r.question, r.answer FROM lab_sessions s LEFT JOIN lab_receipts r"
            " ON r.session = s.key AND r.request_id = %s WHERE s.key = %s",
            (request_id, key),
        ).fetchone()
        return row_state(row, self._label, name)

    def receipt_ids(self, key: str, name: str) -> tuple[str, ...]:
        """The remembered request ids, oldest first."""
        note_shared_access(access_name(self._label), _row(name), "r")
        rows = self._db.execute(
            "SELECT request_id FROM lab_receipts WHERE session = %s ORDER BY seq, request_id", (key,)
        ).fetchall()
        return tuple(str(row[0]) for row in rows)

    @contextlib.contextmanager
    def row_held(self, name: str) -> Iterator[None]:
        """Hold session ``name``'s row locked in an open transaction until the block ends (then commit).

        What a worker does when it locks the session for the whole model call (pessimistic locking): every other
        worker's commit waits for it. Reads do not wait (PostgreSQL's readers see the last committed row). This
        store's own commits inside the block run in the open transaction.
        """
        note_shared_access(access_name(self._label), _row(name), "w")
        key = self._db.execute("SELECT key FROM lab_sessions WHERE name = %s", (name,)).fetchone()
        if key is None:
            raise StoreError(f"{self._label}: no session {name}")
        with self._write_transaction(str(key[0]), name):
            self._holding = True
            try:
                yield
            finally:
                self._holding = False

    @contextlib.contextmanager
    def _write_transaction(self, key: str, name: str) -> Iterator[None]:
        """A transaction holding the row lock: within :meth:`row_held`, a savepoint of the open one."""
        if self._holding:
            with self._db.transaction():
                yield
            return
        model = self._row_lock
        if model is not None:
            if model.locked() and self._row_is_locked(key):
                self.lock_waits += 1  # the server says the row is held: the wait is real, and modelled below
            model.acquire()
        try:
            with self._db.transaction():
                self._lock_row(key, name, modelled=model is not None)
                yield
        finally:
            if model is not None:
                model.release()

    def _lock_row(self, key: str, name: str, *, modelled: bool) -> None:
        try:
            with self._db.transaction():  # a savepoint: a refused NOWAIT leaves the transaction usable
                self._db.execute("SELECT 1 FROM lab_sessions WHERE key = %s FOR UPDATE NOWAIT", (key,))
            return
        except _errors.LockNotAvailable:
            if modelled:
                raise StoreError(
                    f"{self._label}: session {name}'s row is locked by a transaction outside the lab"
                ) from None
        self.lock_waits += 1  # another transaction holds the row: wait for it, for real
        self._db.execute("SELECT 1 FROM lab_sessions WHERE key = %s FOR UPDATE", (key,))

    def _row_is_locked(self, key: str) -> bool:
        """Ask the server, without waiting, whether another transaction holds the row."""
        try:
            with self._db.transaction():
                self._db.execute("SELECT 1 FROM lab_sessions WHERE key = %s FOR UPDATE NOWAIT", (key,))
        except _errors.LockNotAvailable:
            return True
        return False

    def drop_session(self, name: str) -> None:
        """Delete session ``name`` and its receipts (tests and lessons start from a clean row)."""
        note_shared_access(access_name(self._label), _row(name), "w")
        self._db.execute("DELETE FROM lab_sessions WHERE name = %s", (name,))

    def close(self) -> None:
        """Close the connection (a kept one, see ``reuse``, stays open for the next store of its slot)."""
        if not self._reused:
            self._db.close()

    def __repr__(self) -> str:
        return f"<PostgresStore {self._label}>"


_kept: dict[tuple[str, str | None], Any] = {}
"""Connections kept for ``PostgresStore(..., reuse=SLOT)``: a lesson set up afresh for every run of an exploration
would otherwise pay a new connection per worker per run."""
_IDLE = psycopg.pq.TransactionStatus.IDLE if psycopg is not None else None
