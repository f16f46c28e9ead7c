"""The SQLite store: the embedded default for anything durable, on the standard library's ``sqlite3``.

One connection per store object (per worker), in autocommit mode with explicit transactions, WAL journal (readers
never wait for the writer), and a lock timeout for the writers: SQLite has one writer at a time per database, so a
commit that finds another one in progress waits for it (``BEGIN IMMEDIATE``), up to ``lock_timeout`` seconds (5 by
default), then fails with a :class:`~lab.sessions.stores.StoreError` in the same words as PostgreSQL's ("session
s1's row is held by another client for over 5 s"); here the lock held is the whole database's. ``busy_waits``
counts the commits that had to wait, the number the benchmark reports.

**Durability.** ``synchronous=NORMAL`` (the default) survives a crash of the process, and of the machine for every
commit but the last few since the last checkpoint, which a power cut may lose; ``durable=True`` (or
``?synchronous=full`` in the store's name) syncs the WAL at every commit, so a power cut loses nothing committed,
for a sync per commit. A refused commit (STALE, DUPLICATE, ID_CONFLICT) writes nothing and syncs nothing.

Tables (schema version 1)::

    lab_schema(version)                                    -- one row: 1
    lab_sessions(name PRIMARY KEY, key UNIQUE, version, history)
    lab_receipts(session -> lab_sessions.key, request_id, seq, question, answer, PRIMARY KEY(session, request_id))

``seq`` is the version a receipt's commit produced; keeping the newest ``receipt_capacity`` receipts is deleting
``seq <= version - receipt_capacity``.
"""

from __future__ import annotations

import secrets
import sqlite3
from pathlib import Path

from lab.hooks import note_shared_access
from lab.sessions.stores.commits import SqlCommits
from lab.sessions.stores.failures import Failure, Outcome, check_text
from lab.sessions.stores.options import LOCK_TIMEOUT, query_options, seconds
from lab.sessions.stores.rows import Histories
from lab.sessions.stores.store import SCHEMA_VERSION, RowState, StoreError, access_name
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

_SYNC_MODES = ("OFF", "NORMAL", "FULL")
_SETTINGS = ("synchronous", "lock_timeout")
_RECEIPT_COUNTS = "(SELECT max(seq) AS m, count(*) AS c, count(DISTINCT seq) AS d FROM lab_receipts WHERE session = ?)"


class SqliteStore(SqlCommits):
    """Sessions in one SQLite file. ``name`` is what the explorer and evidence call it (default: the path).

    ``synchronous`` is SQLite's setting of that name (OFF, NORMAL or FULL, any case); ``durable=True`` is FULL
    (see the module docstring for what each survives). ``lock_timeout`` bounds a writer's wait for another's.

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

    READ = (
        "SELECT s.version, s.history, r.question, r.answer,"
        " (SELECT max(seq) FROM lab_receipts WHERE session = s.key) FROM lab_sessions s"
        " LEFT JOIN lab_receipts r ON r.session = s.key AND r.request_id = ? WHERE s.key = ?"
    )
    LOCKED_ROW = (
        "SELECT s.version, EXISTS (SELECT 1 FROM lab_receipts r WHERE r.session = s.key AND r.request_id = ?),"
        f" n.m, n.c, n.d FROM lab_sessions s, {_RECEIPT_COUNTS} n WHERE s.key = ?"
    )
    COMPARE_AND_SET = "UPDATE lab_sessions SET version = version + 1, history = ? WHERE key = ? AND version = ?"
    OVERWRITE = "UPDATE lab_sessions SET version = ?, history = ? WHERE key = ?"
    STORE_RECEIPT = (
        "INSERT OR REPLACE INTO lab_receipts (session, request_id, seq, question, answer) VALUES (?, ?, ?, ?, ?)"
    )
    EVICT_RECEIPTS = "DELETE FROM lab_receipts WHERE session = ? AND seq <= ?"

    def __init__(
        self,
        path: str | Path,
        *,
        name: str | None = None,
        lock_timeout: float = LOCK_TIMEOUT,
        synchronous: str = "NORMAL",
        durable: bool = False,
    ) -> None:
        self.path = str(path)
        mode = synchronous.upper() if isinstance(synchronous, str) else synchronous
        if mode not in _SYNC_MODES:
            raise StoreError(f"synchronous is one of {', '.join(_SYNC_MODES)}, not {synchronous!r}")
        if durable and mode != "FULL":
            if synchronous != "NORMAL":
                raise StoreError(f"durable=True means synchronous=FULL, not {synchronous}")
            mode = "FULL"
        self.synchronous = mode
        self.lock_timeout = seconds(lock_timeout, "lock_timeout", f"sqlite:{self.path}")
        self._label = f"sqlite:{name if name is not None else self.path}"
        self._busy_ms = int(self.lock_timeout * 1000)
        self.busy_waits = 0
        self._histories = Histories()  # decoding and checking the history read (lab.sessions.stores.rows)
        try:
            self._db = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False, timeout=0)
            self._db.execute(f"PRAGMA busy_timeout = {self._busy_ms}")
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute(f"PRAGMA synchronous={mode}")
            self._db.execute("PRAGMA foreign_keys=ON")
            self._ensure_schema()
        except sqlite3.Error as error:
            raise StoreError(f"cannot use {self.path} as a SQLite store: {error}") from None

    @classmethod
    def from_spec(cls, spec: str) -> SqliteStore:
        """The store ``sqlite:PATH[?synchronous=full&lock_timeout=SECONDS]`` names (the part after ``sqlite:``)."""
        path, _, query = spec.partition("?")
        if not path:
            raise StoreError("sqlite: needs a file, as in sqlite:chat.db")
        settings = query_options(query, _SETTINGS, f"sqlite:{path}")
        return cls(
            path,
            synchronous=settings.get("synchronous", "NORMAL"),
            lock_timeout=seconds(settings.get("lock_timeout", LOCK_TIMEOUT), "lock_timeout", f"sqlite:{path}"),
        )

    @property
    def label(self) -> str:
        """``sqlite:NAME``."""
        return self._label

    def _ensure_schema(self) -> None:
        """Create the tables on first use (one writer does, in one transaction); refuse another schema version."""
        if self._schema_version() == SCHEMA_VERSION:
            return
        self._begin_write("", "")
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

    def _begin_write(self, key: str, name: str) -> None:
        """``BEGIN IMMEDIATE``: take the database's one write lock now, waiting for another writer if need be (up
        to the lock timeout; past it, SQLite's busy error, which :meth:`_failure` calls HELD)."""
        self._db.execute("PRAGMA busy_timeout = 0")
        try:
            self._db.execute("BEGIN IMMEDIATE")
            return
        except sqlite3.OperationalError as error:
            if _kind(error) != "BUSY":
                raise
        finally:
            self._db.execute(f"PRAGMA busy_timeout = {self._busy_ms}")
        self.busy_waits += 1  # another writer holds the lock: wait for it, up to the lock timeout
        self._db.execute("BEGIN IMMEDIATE")

    def _end_write(self, commit: bool) -> None:
        """``COMMIT`` or ``ROLLBACK``. A ``COMMIT`` SQLite refuses (a full disk) leaves nothing committed: it is
        rolled back here, so the outcome is known (nothing written), unlike a lost PostgreSQL connection."""
        if not commit:
            if self._db.in_transaction:
                self._db.execute("ROLLBACK")
            return
        try:
            self._db.execute("COMMIT")
        except sqlite3.Error:
            if self._db.in_transaction:
                self._db.execute("ROLLBACK")
            self._outcome = Outcome.NOTHING_WRITTEN
            raise

    def _failure(self, error: BaseException) -> tuple[Failure, float] | None:
        if not isinstance(error, sqlite3.Error):
            return None
        kind = _kind(error)
        if kind == "BUSY":
            return Failure.HELD, self.lock_timeout
        if kind == "FULL":
            return Failure.FULL, 0.0
        if kind == "READONLY":
            return Failure.READ_ONLY, 0.0
        return Failure.OTHER, 0.0

    def open_session(self, name: str) -> str:
        """The key of session ``name``, creating its row on first use. Finding an existing row is a read: it
        never waits for a writer."""
        check_text(self._label, "session name", name)
        note_shared_access(access_name(self._label), _row(name), "w")
        with self._operation("opening", name):
            found = self._db.execute("SELECT key FROM lab_sessions WHERE name = ?", (name,)).fetchone()
            if found is not None:
                return str(found[0])
        with self._operation("opening", name, writes=True), self._write_transaction("", name) as write:
            self._db.execute(
                "INSERT OR IGNORE INTO lab_sessions (name, key) VALUES (?, ?)", (name, secrets.token_hex(16))
            )
            key = self._db.execute("SELECT key FROM lab_sessions WHERE name = ?", (name,)).fetchone()[0]
            write.commit = True
        return str(key)

    def read(self, key: str, name: str, request_id: str | None = None) -> RowState:
        """Version, history and one receipt in one statement (one snapshot), checked (:mod:`.rows`)."""
        if request_id is not None:
            check_text(self._label, "request id", request_id)
        note_shared_access(access_name(self._label), _row(name), "r")
        with self._operation("read", name):
            row = self._db.execute(self.READ, (request_id, key)).fetchone()
        return self._histories.row_state(row, self._label, name)

    def receipt_ids(self, key: str, name: str) -> tuple[str, ...]:
        """The remembered request ids, oldest first."""
        note_shared_access(access_name(self._label), _row(name), "r")
        with self._operation("read", name):
            rows = self._db.execute(
                "SELECT request_id FROM lab_receipts WHERE session = ? ORDER BY seq, request_id", (key,)
            ).fetchall()
        return tuple(str(row[0]) for row in rows)

    def drop_session(self, name: str) -> None:
        """Delete session ``name`` and its receipts (tests and lessons start from a clean row)."""
        check_text(self._label, "session name", name)
        note_shared_access(access_name(self._label), _row(name), "w")
        with self._operation("drop", name, writes=True), self._write_transaction("", name) as write:
            self._db.execute("DELETE FROM lab_sessions WHERE name = ?", (name,))
            write.commit = True

    def close(self) -> None:
        """Close the connection."""
        self._db.close()

    def __repr__(self) -> str:
        return f"<SqliteStore {self._label}>"


def _kind(error: sqlite3.Error) -> str:
    """SQLite's primary result code without its prefix (``BUSY``, ``FULL``, ``READONLY``...); BUSY also for
    LOCKED, a table locked by another connection of this process."""
    code = str(getattr(error, "sqlite_errorname", "") or "").removeprefix("SQLITE_").split("_")[0]
    if code == "LOCKED" or (not code and ("locked" in str(error) or "busy" in str(error))):
        return "BUSY"
    return code
