"""The SQLite store: the embedded default for anything durable, on the standard library's ``sqlite3``.

One connection per store object (per worker), in autocommit mode with explicit transactions, WAL journal (readers
never wait for the writer), ``synchronous=NORMAL``, and a busy timeout for the writers: SQLite has one writer at a
time per database, so a commit that finds another one in progress waits for it (``BEGIN IMMEDIATE``), up to
``busy_timeout`` seconds, then fails with a :class:`~lab.sessions.stores.StoreError`. ``busy_waits`` counts the
commits that had to wait, the number the benchmark reports.

Tables (schema version 1)::

    lab_schema(version)                                    -- one row: 1
    lab_sessions(name PRIMARY KEY, key UNIQUE, version, history)
    lab_receipts(session -> lab_sessions.key, request_id, seq, question, answer, PRIMARY KEY(session, request_id))

``seq`` is the version a receipt's commit produced; keeping the newest ``receipt_capacity`` receipts is deleting
``seq <= version - receipt_capacity``.
"""

from __future__ import annotations

import contextlib
import secrets
import sqlite3
from collections.abc import Iterator
from pathlib import Path

from lab.hooks import note_shared_access
from lab.sessions.stores.commits import SqlCommits
from lab.sessions.stores.store import SCHEMA_VERSION, RowState, StoreError, access_name, row_state
from lab.sessions.stores.store import row_name as _row

_SCHEMA = (
    "CREATE TABLE lab_schema (version INTEGER NOT NULL)",
    "CREATE TABLE lab_sessions (name TEXT PRIMARY KEY, key TEXT NOT NULL UNIQUE,"
    " version INTEGER NOT NULL DEFAULT 0, history TEXT NOT NULL DEFAULT '[]')",
    "CREATE TABLE lab_receipts (session TEXT NOT NULL REFERENCES lab_sessions(key) ON DELETE CASCADE,"
    " request_id TEXT NOT NULL, seq INTEGER NOT NULL, question TEXT NOT NULL, answer TEXT NOT NULL,"
    " PRIMARY KEY (session, request_id))",
    "CREATE INDEX lab_receipts_by_seq ON lab_receipts (session, seq)",
)


_SYNC_MODES = {"OFF": "OFF", "NORMAL": "NORMAL", "FULL": "FULL"}


class SqliteStore(SqlCommits):
    """Sessions in one SQLite file. ``name`` is what the explorer and evidence call it (default: the path).

    ``synchronous`` is SQLite's setting of that name: NORMAL (the default) survives a crash of the process, FULL
    also a power cut, at the price of a sync per commit.

    >>> import tempfile, os
    >>> from lab.sessions.versioned import VersionedSession
    >>> scratch = tempfile.TemporaryDirectory()
    >>> path = os.path.join(scratch.name, "chat.db")
    >>> store = SqliteStore(path)
    >>> session = VersionedSession("s1", store=store)
    >>> session.commit(session.begin("r1", "q"), "a", "stop")
    <CommitStatus.COMMITTED: 'COMMITTED'>
    >>> later = SqliteStore(path)   # another process, later: the row is still there
    >>> VersionedSession("s1", store=later).version
    1
    >>> store.close(); later.close(); scratch.cleanup()
    """

    RECEIPT_TAKEN = "SELECT 1 FROM lab_receipts WHERE session = ? AND request_id = ?"
    COMPARE_AND_SET = "UPDATE lab_sessions SET version = version + 1, history = ? WHERE key = ? AND version = ?"
    OVERWRITE = "UPDATE lab_sessions SET version = ?, history = ? WHERE key = ?"
    STORE_RECEIPT = (
        "INSERT OR REPLACE INTO lab_receipts (session, request_id, seq, question, answer) VALUES (?, ?, ?, ?, ?)"
    )
    EVICT_RECEIPTS = "DELETE FROM lab_receipts WHERE session = ? AND seq <= ?"

    def __init__(
        self, path: str | Path, *, name: str | None = None, busy_timeout: float = 5.0, synchronous: str = "NORMAL"
    ) -> None:
        if synchronous not in _SYNC_MODES:
            raise StoreError(f"synchronous is one of {', '.join(_SYNC_MODES)}, not {synchronous!r}")
        self.path = str(path)
        self._label = f"sqlite:{name if name is not None else self.path}"
        self._busy_ms = int(busy_timeout * 1000)
        self.busy_waits = 0
        try:
            self._db = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False, timeout=busy_timeout)
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute(f"PRAGMA synchronous={_SYNC_MODES[synchronous]}")
            self._db.execute("PRAGMA foreign_keys=ON")
            self._ensure_schema()
        except sqlite3.Error as error:
            raise StoreError(f"cannot use {self.path} as a SQLite store: {error}") from None

    @property
    def label(self) -> str:
        """``sqlite:NAME``."""
        return self._label

    def _ensure_schema(self) -> None:
        """Create the tables on first use (one writer does, in one transaction); refuse another schema version."""
        if self._schema_version() == SCHEMA_VERSION:
            return
        self._begin_write()
        try:
            found = self._schema_version()
            if found is None:
                for statement in _SCHEMA:
                    self._db.execute(statement)
                self._db.execute("INSERT INTO lab_schema (version) VALUES (?)", (SCHEMA_VERSION,))
            self._db.execute("COMMIT")
        except BaseException:
            self._db.execute("ROLLBACK")
            raise
        found = self._schema_version()
        if found != SCHEMA_VERSION:
            raise StoreError(
                f"{self.path} holds lab tables of schema version {found}; this lab knows version {SCHEMA_VERSION}"
            )

    def _schema_version(self) -> int | None:
        exists = self._db.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'lab_schema'")
        if exists.fetchone() is None:
            return None
        row = self._db.execute("SELECT version FROM lab_schema").fetchone()
        return int(row[0]) if row is not None else None

    def _begin_write(self) -> None:
        """``BEGIN IMMEDIATE``: take the database's one write lock now, waiting for another writer if need be."""
        self._db.execute("PRAGMA busy_timeout = 0")
        try:
            self._db.execute("BEGIN IMMEDIATE")
            return
        except sqlite3.OperationalError as error:
            if "locked" not in str(error) and "busy" not in str(error):
                raise
        self.busy_waits += 1  # another writer holds the lock: wait for it, up to the busy timeout
        self._db.execute(f"PRAGMA busy_timeout = {self._busy_ms}")
        try:
            self._db.execute("BEGIN IMMEDIATE")
        except sqlite3.OperationalError as error:
            raise StoreError(
                f"{self._label}: {error} (another writer held it for more than the busy timeout)"
            ) from None

    def open_session(self, name: str) -> str:
        """The key of session ``name``, creating its row on first use."""
        note_shared_access(access_name(self._label), _row(name), "w")
        found = self._db.execute("SELECT key FROM lab_sessions WHERE name = ?", (name,)).fetchone()
        if found is not None:
            return str(found[0])
        self._begin_write()
        try:
            self._db.execute(
                "INSERT OR IGNORE INTO lab_sessions (name, key) VALUES (?, ?)", (name, secrets.token_hex(16))
            )
            key = self._db.execute("SELECT key FROM lab_sessions WHERE name = ?", (name,)).fetchone()[0]
            self._db.execute("COMMIT")
        except BaseException:
            self._db.execute("ROLLBACK")
            raise
        return str(key)

    def read(self, key: str, name: str, request_id: str | None = None) -> RowState:
        """Version, history and one receipt in one statement (one snapshot)."""
        note_shared_access(access_name(self._label), _row(name), "r")
        row = self._db.execute(
            "SELECT s.version, s.history, r.question, r.answer FROM lab_sessions s LEFT JOIN lab_receipts r"
            " ON r.session = s.key AND r.request_id = ? WHERE s.key = ?",
            (request_id, key),
        ).fetchone()
        return row_state(row, self._label, name)

    @contextlib.contextmanager
    def _write_transaction(self, key: str, name: str) -> Iterator[None]:
        """``BEGIN IMMEDIATE`` (:meth:`_begin_write`), then ``COMMIT``, or ``ROLLBACK`` when the block raises."""
        self._begin_write()
        try:
            yield
        except BaseException:
            if self._db.in_transaction:
                self._db.execute("ROLLBACK")
            raise
        self._db.execute("COMMIT")

    def receipt_ids(self, key: str, name: str) -> tuple[str, ...]:
        """The remembered request ids, oldest first."""
        note_shared_access(access_name(self._label), _row(name), "r")
        rows = self._db.execute(
            "SELECT request_id FROM lab_receipts WHERE session = ? ORDER BY seq, request_id", (key,)
        ).fetchall()
        return tuple(str(row[0]) for row in rows)

    def drop_session(self, name: str) -> None:
        """Delete session ``name`` and its receipts (tests and lessons start from a clean row)."""
        note_shared_access(access_name(self._label), _row(name), "w")
        self._begin_write()
        try:
            self._db.execute("DELETE FROM lab_sessions WHERE name = ?", (name,))
            self._db.execute("COMMIT")
        except BaseException:
            self._db.execute("ROLLBACK")
            raise

    def close(self) -> None:
        """Close the connection."""
        self._db.close()

    def __repr__(self) -> str:
        return f"<SqliteStore {self._label}>"
