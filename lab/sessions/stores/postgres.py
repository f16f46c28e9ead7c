"""The PostgreSQL store: sessions shared by worker processes on several machines, through psycopg 3.

Same tables and transactions as the SQLite store (``lab_schema``, ``lab_sessions``, ``lab_receipts``), created on
first use under an advisory lock so that two processes starting together do not race on ``CREATE TABLE``. One
connection per store object (per worker), in autocommit mode with explicit transactions at READ COMMITTED.

**Bounded waits.** Every connection sets ``lock_timeout`` (5 s by default), ``statement_timeout`` (30 s) and
``idle_in_transaction_session_timeout`` (60 s), each configurable in the URL's query
(``postgresql://...?lock_timeout=2``, in seconds) or the constructor. A client frozen mid-commit therefore makes the
others' commits fail after 5 s with one line ("session s1's row is held by another client for over 5 s"), not wait
forever, and the server ends the frozen client's transaction after a minute. Opening a session that exists is a
plain read, which never waits for a row lock (an ``INSERT ... ON CONFLICT`` would wait for the holder).

**The commit** is one round trip, its own transaction (:mod:`.pgcommit`): a session sends its ticket to a
server-side function that reads, decides and writes or refuses (``commit_ticket``), or, having read the row itself,
sends one compare-and-set statement (``commit_round``). No client holds the row across a round trip, and a
refusal writes nothing and syncs nothing. ``row_held()`` (pessimistic locking, the ``row_lock_wait`` lesson) and
the mutant's ``overwrite`` lock the row in a write transaction (:mod:`.pgrow`).

**Errors and reconnecting.** Every driver error becomes one :class:`StoreError` line (:mod:`.failures`). A
connection the server closed (a restart, a stop, an idle transaction ended) is reopened at the start of the next
call; the call that failed is not retried, and a commit lost while its ``COMMIT`` was on its way says its outcome
is unknown: the caller retries with the same request id, which is DUPLICATE if it had landed.

**In the lab.** A database call that blocks on another actor must be a wait the scheduler sees, never a thread
stuck in C (the watchdog would call it HUNG). The lab never parks an actor inside a transaction, so two actors'
transactions cannot overlap, except in the lesson that holds a row on purpose (``row_lock_wait``), which gives
every worker's store the same ``row_lock``, a lock the scheduler sees standing for the server's row lock
(:mod:`.pgrow`): a worker that would wait inside the server waits on it instead, and the trace and a deadlock
report name who holds the row.
"""

from __future__ import annotations

import secrets
from typing import Any

from lab.hooks import note_shared_access
from lab.sessions.stores.failures import Failure, check_text, first_line
from lab.sessions.stores.options import seconds
from lab.sessions.stores.pgcommit import ONE_STEP_FUNCTION, ONE_STEP_NAME, OneStatementCommit
from lab.sessions.stores.pgprepared import TEXT, prepare, prepared, read_row, run
from lab.sessions.stores.pgrow import RowLockModel
from lab.sessions.stores.pgsql import available, psycopg
from lab.sessions.stores.pgsql import errors as _errors
from lab.sessions.stores.pgurl import SETTINGS, public_url, split_url
from lab.sessions.stores.rows import Histories
from lab.sessions.stores.store import SCHEMA_VERSION, RowState, StoreError, access_name
from lab.sessions.stores.store import row_name as _row

__all__ = ["PostgresStore", "RowLockModel", "available", "psycopg", "public_url", "split_url"]

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


class PostgresStore(OneStatementCommit):
    """Sessions in one PostgreSQL database. ``name`` is what the explorer and evidence call it (default: the URL,
    less any password); ``row_lock`` is the lab's picture of the row lock (see the module docstring). With
    ``reuse=SLOT`` the store takes this process's kept connection for ``(url, SLOT)`` when it is idle, and keeps a
    new one there otherwise: lessons reuse one connection per worker across the runs of an exploration.
    ``lock_timeout``, ``statement_timeout`` and ``idle_timeout`` (seconds) override the URL's settings."""

    READ = (
        "SELECT s.version, s.history, r.question, r.answer,"
        " (SELECT max(seq) FROM lab_receipts WHERE session = s.key) FROM lab_sessions s"
        " LEFT JOIN lab_receipts r ON r.session = s.key AND r.request_id = %s WHERE s.key = %s"
    )
    READ_ROW = (
        "SELECT s.version, s.history, NULL::text, NULL::text,"
        " (SELECT max(seq) FROM lab_receipts WHERE session = s.key) FROM lab_sessions s WHERE s.key = %s"
    )
    """:attr:`READ` when no request id is asked about (``begin``, ``snapshot``): the same columns, no receipt
    looked up (the join would find none), 5 to 15 us of the server's CPU less a read. ``..._PREPARED``: each as
    the statement prepared on every connection (:mod:`.pgprepared`)."""
    READ_PREPARED, READ_ROW_PREPARED = prepared(READ, (TEXT, TEXT)), prepared(READ_ROW, (TEXT,))
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
        lock_timeout: float | None = None,
        statement_timeout: float | None = None,
        idle_timeout: float | None = None,
        reuse: str | None = None,
    ) -> None:
        conninfo, settings = split_url(url)  # a malformed URL is the first thing to say, driver or not
        if psycopg is None:
            raise StoreError("the PostgreSQL store needs psycopg 3: pip install 'concurrency-lab[postgres]'")
        self._label = name if name is not None else public_url(url)
        given: dict[str, float | None] = {
            "lock_timeout": lock_timeout,
            "statement_timeout": statement_timeout,
            "idle_timeout": idle_timeout,
        }
        timeouts: dict[str, float] = {}
        for key, (_server, default) in SETTINGS.items():
            chosen = given[key]
            timeouts[key] = seconds(chosen if chosen is not None else settings.get(key, default), key, self._label)
        self.lock_timeout = timeouts["lock_timeout"]
        self.statement_timeout = timeouts["statement_timeout"]
        self.idle_timeout = timeouts["idle_timeout"]
        self._server_settings = tuple(
            (server, str(max(1, round(timeouts[key] * 1000)))) for key, (server, _default) in SETTINGS.items()
        )
        self._conninfo = conninfo
        self._connect_timeout = max(1, int(connect_timeout))
        self._slot = (url, reuse) if reuse is not None else None
        self._row_lock = row_lock
        self._model_held = False
        self._holding = False
        self.lock_waits = 0
        self._one_step = False  # until the schema is seen (_ensure_schema)
        self._histories = Histories()
        try:
            kept = _kept.get(self._slot) if self._slot is not None else None
            if kept is not None and kept[1] == self._server_settings and _idle(kept[0]):
                self._db: Any = kept[0]  # this process's connection for that slot: the schema is known to be there
                self._one_step = kept[2]
                self._prepare_statements()
                return
            self._db = self._connect()
            self._ensure_schema()
            self._prepare_statements()
            if self._slot is not None:
                _kept[self._slot] = (self._db, self._server_settings, self._one_step)
        except psycopg.Error as error:
            raise StoreError(f"cannot use {public_url(url)} as a PostgreSQL store: {first_line(error)}") from None

    def _connect(self) -> Any:
        """A new connection with this store's timeouts set (kept in its slot when the store has one)."""
        assert psycopg is not None
        db = psycopg.connect(self._conninfo, autocommit=True, connect_timeout=self._connect_timeout)
        names = ", ".join("set_config(%s, %s, false)" for _ in self._server_settings)
        db.execute(f"SELECT {names}", [part for pair in self._server_settings for part in pair])
        if self._slot is not None:
            _kept[self._slot] = (db, self._server_settings, self._one_step)
        return db

    @property
    def label(self) -> str:
        """``postgresql://user@host:port/db``, or the name given."""
        return self._label

    def _ensure_schema(self) -> None:
        """The tables (created under an advisory lock when missing, refused when of another schema version), and
        the one-step commit's function, created when missing; without the right to create it, sessions commit
        the ordinary way (:meth:`commit_ticket`)."""
        query = "SELECT to_regclass('lab_schema') IS NOT NULL, to_regproc(%s) IS NOT NULL"
        found, function = self._db.execute(query, (ONE_STEP_NAME,)).fetchone()
        current = False
        if found:
            row = self._db.execute("SELECT version FROM lab_schema").fetchone()
            current = row is not None and row[0] == SCHEMA_VERSION
        if not current:
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
        self._one_step = bool(function) or self._create_function()

    def _prepare_statements(self) -> None:
        """Prepare the reads and the one-step commit here (:mod:`.pgprepared`; a reopened connection: at first use)."""
        commit = (self.COMMIT_TICKET_PREPARED,) if self._one_step else ()
        prepare(self._db, self.READ_ROW_PREPARED, self.READ_PREPARED, *commit)

    def _create_function(self) -> bool:
        """Create :data:`~.pgcommit.ONE_STEP_FUNCTION` (under the schema's advisory lock, so that processes
        starting together do not race); False when this user may not."""
        try:
            with self._db.transaction():
                self._db.execute("SELECT pg_advisory_xact_lock(%s)", (_SCHEMA_LOCK,))
                if self._db.execute("SELECT to_regproc(%s) IS NULL", (ONE_STEP_NAME,)).fetchone()[0]:
                    self._db.execute(ONE_STEP_FUNCTION)
        except _errors.InsufficientPrivilege:
            return False
        return True

    # -- the hooks of SqlCommits ---------------------------------------------------------------------------------

    def _prepare(self) -> None:
        """Reopen a connection the server closed (a restart, a stop): the call that lost it said so; this one
        starts afresh. Reopening is not retrying: nothing of the failed call is run again."""
        if not (self._db.closed or self._db.broken) or self._holding:
            return
        assert psycopg is not None
        try:
            self._db = self._connect()
        except psycopg.Error as error:
            raise StoreError(
                f"{self._label}: cannot reach the server ({first_line(error)}); nothing was done: try again when "
                "it is back"
            ) from None

    def _failure(self, error: BaseException) -> tuple[Failure, float] | None:
        if psycopg is None or not isinstance(error, psycopg.Error):
            return None
        if isinstance(error, _errors.LockNotAvailable):
            return Failure.HELD, self.lock_timeout
        if isinstance(error, _errors.QueryCanceled):
            return Failure.SLOW, self.statement_timeout
        if isinstance(error, _errors.DiskFull):
            return Failure.FULL, 0.0
        if isinstance(error, _errors.ReadOnlySqlTransaction):
            return Failure.READ_ONLY, 0.0
        if self._db.closed or self._db.broken:
            return Failure.LOST, 0.0
        return Failure.OTHER, 0.0

    # -- the operations --------------------------------------------------------------------------------------------

    def open_session(self, name: str) -> str:
        """The key of session ``name``, creating its row on first use. Finding an existing row is a plain read,
        which never waits for another client's row lock."""
        check_text(self._label, "session name", name)
        note_shared_access(access_name(self._label), _row(name), "w")
        with self._operation("opening", name):
            found = self._db.execute("SELECT key FROM lab_sessions WHERE name = %s", (name,)).fetchone()
            if found is not None:
                return str(found[0])
        with self._operation("opening", name, writes=True):
            self._db.execute(
                "INSERT INTO lab_sessions (name, key) VALUES (%s, %s) ON CONFLICT (name) DO NOTHING",
                (name, secrets.token_hex(16)),
            )
            return str(self._db.execute("SELECT key FROM lab_sessions WHERE name = %s", (name,)).fetchone()[0])

    def read(self, key: str, name: str, request_id: str | None = None) -> RowState:
        """Version, history and one receipt in one statement (one snapshot, no row lock), checked (:mod:`.rows`)."""
        if request_id is not None:
            check_text(self._label, "request id", request_id)
        note_shared_access(access_name(self._label), _row(name), "r")
        with self._operation("read", name):
            db, encoding = self._db, self._db.info.encoding
            if request_id is None:
                result = run(db, self.READ_ROW_PREPARED, [key.encode(encoding)])
            else:
                result = run(db, self.READ_PREPARED, [request_id.encode(encoding), key.encode(encoding)])
            row = None if result.ntuples == 0 else read_row(result, 0, encoding)
        return self._histories.row_state(row, self._label, name)

    def receipt_ids(self, key: str, name: str) -> tuple[str, ...]:
        """The remembered request ids, oldest first."""
        note_shared_access(access_name(self._label), _row(name), "r")
        with self._operation("read", name):
            rows = self._db.execute(
                "SELECT request_id FROM lab_receipts WHERE session = %s ORDER BY seq, request_id", (key,)
            ).fetchall()
        return tuple(str(row[0]) for row in rows)

    def drop_session(self, name: str) -> None:
        """Delete session ``name`` and its receipts (tests and lessons start from a clean row)."""
        check_text(self._label, "session name", name)
        note_shared_access(access_name(self._label), _row(name), "w")
        with self._operation("drop", name, writes=True):
            self._db.execute("DELETE FROM lab_sessions WHERE name = %s", (name,))

    def close(self) -> None:
        """Close the connection (a kept one, see ``reuse``, stays open for the next store of its slot)."""
        if self._slot is None:
            self._db.close()

    def __repr__(self) -> str:
        return f"<PostgresStore {self._label}>"


def _idle(db: Any) -> bool:
    return not db.closed and not db.broken and db.info.transaction_status == psycopg.pq.TransactionStatus.IDLE


_kept: dict[tuple[str, str], tuple[Any, tuple[tuple[str, str], ...], bool]] = {}
"""Connections kept for ``PostgresStore(..., reuse=SLOT)``, with the timeouts they were given and whether the
database has the one-step commit's function: a lesson set up
afresh for every run of an exploration would otherwise pay a new connection per worker per run."""
