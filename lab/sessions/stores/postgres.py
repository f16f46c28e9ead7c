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

**Row locks.** A commit locks its session's row (``SELECT ... FOR UPDATE``), reading the version and the receipt
in the same statement, before the compare-and-set. It first asks with ``NOWAIT``; when another transaction holds
the row it counts a lock wait (``lock_waits``, the number the benchmark reports) and then waits for it, up to the
lock timeout. A commit that will be refused rolls back: no WAL record, no sync (:mod:`.commits`).

**Errors and reconnecting.** Every driver error becomes one :class:`StoreError` line (:mod:`.failures`). A
connection the server closed (a restart, a stop, an idle transaction ended) is reopened at the start of the next
call; the call that failed is not retried, and a commit lost while its ``COMMIT`` was on its way says its outcome
is unknown: the caller retries with the same request id, which is DUPLICATE if it had landed.

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
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from lab.hooks import note_shared_access
from lab.messages import Message
from lab.sessions.stores.commits import SqlCommits
from lab.sessions.stores.failures import Failure, Outcome, check_text, first_line
from lab.sessions.stores.options import IDLE_TIMEOUT, LOCK_TIMEOUT, STATEMENT_TIMEOUT, seconds
from lab.sessions.stores.rows import check_sequence, row_state
from lab.sessions.stores.store import SCHEMA_VERSION, RowState, StoreError, access_name, encode_history
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
_SETTINGS = {
    "lock_timeout": ("lock_timeout", LOCK_TIMEOUT),
    "statement_timeout": ("statement_timeout", STATEMENT_TIMEOUT),
    "idle_timeout": ("idle_in_transaction_session_timeout", IDLE_TIMEOUT),
}
"""The settings a store's URL may carry: ours -> (the server's name for it, its default in seconds)."""
_RECEIPT_COUNTS = "(SELECT max(seq) AS m, count(*) AS c, count(DISTINCT seq) AS d FROM lab_receipts WHERE session = %s)"
_URL_FORM = "postgresql://USER@HOST:PORT/DB"


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


def split_url(url: str) -> tuple[str, dict[str, str]]:
    """The URL to hand the driver, and the lab's own settings taken out of its query (``lock_timeout``,
    ``statement_timeout``, ``idle_timeout``); the driver's own query settings (``sslmode``...) stay. A URL that
    does not parse is one line, which never repeats the URL (it may hold a password)."""
    try:
        parts = urlsplit(url)
        _ = parts.port  # a port that is not a number is found here
    except ValueError as error:
        raise StoreError(f"the PostgreSQL URL is malformed ({error}); write it as {_URL_FORM}") from None
    ours: dict[str, str] = {}
    theirs: list[tuple[str, str]] = []
    for key, value in parse_qsl(parts.query, keep_blank_values=True):
        if key in _SETTINGS:
            ours[key] = value
        else:
            theirs.append((key, value))
    return urlunsplit(parts._replace(query=urlencode(theirs))), ours


class PostgresStore(SqlCommits):
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
    LOCKED_ROW = (
        "SELECT s.version, EXISTS (SELECT 1 FROM lab_receipts r WHERE r.session = s.key AND r.request_id = %s),"
        f" n.m, n.c, n.d FROM lab_sessions s, {_RECEIPT_COUNTS} n WHERE s.key = %s FOR UPDATE OF s"
    )
    COMMIT_ROUND = (
        "WITH moved AS (UPDATE lab_sessions s SET version = version + 1, history = %(history)s"
        " WHERE key = %(key)s AND version = %(expected)s"
        " AND NOT EXISTS (SELECT 1 FROM lab_receipts r WHERE r.session = s.key AND r.request_id = %(request_id)s)"
        " AND NOT EXISTS (SELECT 1 FROM lab_receipts r WHERE r.session = s.key AND r.seq > %(expected)s)"
        " AND (SELECT count(*) = count(DISTINCT seq) FROM lab_receipts r WHERE r.session = s.key)"
        " RETURNING version),"
        " stored AS (INSERT INTO lab_receipts (session, request_id, seq, question, answer)"
        " SELECT %(key)s, %(request_id)s, version, %(question)s, %(answer)s FROM moved),"
        " evicted AS (DELETE FROM lab_receipts WHERE session = %(key)s"
        " AND seq <= (SELECT version FROM moved) - %(capacity)s),"
        " seen AS (SELECT s.version, n.m, n.c, n.d FROM lab_sessions s, "
        + _RECEIPT_COUNTS.replace("%s", "%(key)s")
        + " n WHERE s.key = %(key)s)"
        " SELECT (SELECT count(*) FROM moved), seen.version, seen.m, seen.c, seen.d,"
        " EXISTS (SELECT 1 FROM lab_receipts WHERE session = %(key)s AND request_id = %(request_id)s),"
        " CASE WHEN (SELECT count(*) FROM moved) = 0 AND %(relax)s"
        " THEN set_config('synchronous_commit', 'off', true) END"
        " FROM (SELECT 1) one LEFT JOIN seen ON true"
    )
    """A whole commit in one statement, its own transaction (autocommit), one round trip: the compare-and-set
    (on the version, the request id's receipt and the receipts' sequence numbers), the receipt stored (its ``seq``
    the new version) and the oldest evicted, both reading the compare-and-set's result, so a refusal writes
    nothing. It returns how many rows moved (1 or 0) and the row as the statement's snapshot saw it (version,
    largest seq, receipts, distinct seqs, whether the request id has a receipt), to tell a refusal the snapshot
    explains from a race or a damaged row. A refusal decided on the snapshot takes no lock and has no
    transaction id: nothing is written, nothing synced. One whose compare-and-set waited for another commit's
    row lock and then found the version moved holds that lock (PostgreSQL's re-check takes it), so its
    transaction has an id to commit: ``relax`` lets it commit without waiting for a WAL sync, since it wrote no
    data to lose."""
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
        if psycopg is None:
            raise StoreError("the PostgreSQL store needs psycopg 3: pip install 'concurrency-lab[postgres]'")
        conninfo, settings = split_url(url)
        self._label = name if name is not None else public_url(url)
        given: dict[str, float | None] = {
            "lock_timeout": lock_timeout,
            "statement_timeout": statement_timeout,
            "idle_timeout": idle_timeout,
        }
        timeouts: dict[str, float] = {}
        for key, (_server, default) in _SETTINGS.items():
            chosen = given[key]
            timeouts[key] = seconds(chosen if chosen is not None else settings.get(key, default), key, self._label)
        self.lock_timeout = timeouts["lock_timeout"]
        self.statement_timeout = timeouts["statement_timeout"]
        self.idle_timeout = timeouts["idle_timeout"]
        self._server_settings = tuple(
            (server, str(max(1, round(timeouts[key] * 1000)))) for key, (server, _default) in _SETTINGS.items()
        )
        self._conninfo = conninfo
        self._connect_timeout = max(1, int(connect_timeout))
        self._slot = (url, reuse) if reuse is not None else None
        self._row_lock = row_lock
        self._model_held = False
        self._holding = False
        self.lock_waits = 0
        try:
            kept = _kept.get(self._slot) if self._slot is not None else None
            if kept is not None and kept[1] == self._server_settings and _idle(kept[0]):
                self._db: Any = kept[0]  # this process's connection for that slot: the schema is known to be there
                return
            self._db = self._connect()
            self._ensure_schema()
        except psycopg.Error as error:
            raise StoreError(f"cannot use {public_url(url)} as a PostgreSQL store: {first_line(error)}") from None

    def _connect(self) -> Any:
        """A new connection with this store's timeouts set (kept in its slot when the store has one)."""
        assert psycopg is not None
        db = psycopg.connect(self._conninfo, autocommit=True, connect_timeout=self._connect_timeout)
        names = ", ".join("set_config(%s, %s, false)" for _ in self._server_settings)
        db.execute(f"SELECT {names}", [part for pair in self._server_settings for part in pair])
        if self._slot is not None:
            _kept[self._slot] = (db, self._server_settings)
        return db

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

    def commit_round(
        self,
        key: str,
        name: str,
        *,
        expected_version: int,
        history: tuple[Message, ...],
        request_id: str,
        question: str,
        answer: str,
        receipt_capacity: int,
    ) -> bool:
        """The commit in one round trip (:attr:`COMMIT_ROUND`); False, with nothing written, when it is refused.

        Waiting for the row happens inside the server: the compare-and-set waits for another commit's row lock
        (up to the lock timeout) and re-checks the version when it is let go. No client holds the row across a
        round trip, so refusals never queue for it one after another (the old commit locked the row, then read,
        then decided: 32 processes on one session committed 8 times a second, each commit waiting behind the
        refusals of the last). Within :meth:`row_held` it runs in the open transaction; where the lab models the
        row lock, the lab's lock is taken first and the server asked with ``NOWAIT``.
        """
        self._check_writable(name, request_id, question, answer, history)
        note_shared_access(access_name(self._label), _row(name), "w")
        params = {
            "history": encode_history(history),
            "key": key,
            "expected": expected_version,
            "request_id": request_id,
            "question": question,
            "answer": answer,
            "capacity": receipt_capacity,
            "relax": not self._holding,  # within row_held() the holder's own COMMIT keeps the server's setting
        }
        with self._operation("commit", name, request_id=request_id, writes=True):
            if self._holding:
                row = self._db.execute(self.COMMIT_ROUND, params).fetchone()
            else:
                row = self._commit_alone(key, name, params)
        moved, version, max_seq, count, distinct, taken = row[:6]
        if moved == 1:
            return True
        if version == expected_version and not taken:  # the snapshot allowed it: a race, or a damaged row
            check_sequence(version, max_seq, self._label, name, count=count, distinct=distinct)
            self.lock_waits += 1  # it waited for another commit's row lock, then found the version moved
        return False

    def _commit_alone(self, key: str, name: str, params: dict[str, object]) -> Any:
        """The commit's statement on its own, whose outcome is unknown until its answer comes (a connection lost
        meanwhile). In the lab's model of the row lock, take the lab's lock first and send ``BEGIN``, a ``NOWAIT``
        row lock, the statement and ``COMMIT`` in one pipeline."""
        model = self._row_lock
        if model is not None:
            if model.locked() and self._row_is_locked(key):
                self.lock_waits += 1  # the server says the row is held: the wait is real, and modelled below
            model.acquire()
        try:
            self._outcome = Outcome.UNKNOWN
            if model is None:
                cursor = self._db.execute(self.COMMIT_ROUND, params)  # one statement, its own transaction
            else:
                with self._db.pipeline():
                    self._db.execute("BEGIN")
                    self._db.execute("SELECT 1 FROM lab_sessions WHERE key = %s FOR UPDATE NOWAIT", (key,))
                    cursor = self._db.execute(self.COMMIT_ROUND, params)
                    self._db.execute("COMMIT")
            self._outcome = Outcome.NOTHING_WRITTEN
            return cursor.fetchone()
        except BaseException as error:
            if not (self._db.closed or self._db.broken):
                with contextlib.suppress(Exception):
                    self._db.execute("ROLLBACK")
            if model is not None and _errors is not None and isinstance(error, _errors.LockNotAvailable):
                raise StoreError(
                    f"{self._label}: session {name}'s row is locked by a transaction outside the lab"
                ) from None
            raise
        finally:
            if model is not None:
                model.release()

    # -- the write transactions of overwrite() and row_held() (SqlCommits' hooks) ----------------------------

    def _begin_write(self, key: str, name: str) -> None:
        """``BEGIN`` (within :meth:`row_held`, a savepoint of the open transaction), after taking the lab's
        picture of the row lock when there is one."""
        if self._holding:
            self._db.execute("SAVEPOINT lab_write")
            return
        model = self._row_lock
        if model is not None:
            if model.locked() and self._row_is_locked(key):
                self.lock_waits += 1
            model.acquire()
            self._model_held = True
        try:
            self._db.execute("BEGIN")
        except BaseException:
            self._release_model()
            raise

    def _end_write(self, commit: bool) -> None:
        try:
            if self._holding:
                self._db.execute("RELEASE SAVEPOINT lab_write" if commit else "ROLLBACK TO SAVEPOINT lab_write")
            else:
                self._db.execute("COMMIT" if commit else "ROLLBACK")
        finally:
            if not self._holding:
                self._release_model()

    def _final_commit(self) -> bool:
        return not self._holding  # within row_held, the block's own COMMIT is the one that counts

    def _release_model(self) -> None:
        if self._model_held:
            self._model_held = False
            assert self._row_lock is not None
            self._row_lock.release()

    def _read_locked(self, params: tuple[str, str, str], name: str, expected_version: int | None) -> Any:
        """Lock the row and read it (:meth:`row_held`): first with ``NOWAIT``; when another transaction holds the
        row, count a lock wait and wait for it (up to the lock timeout). Where the lab models the lock, the holder
        has let go already, so a refusal means a transaction outside the lab holds the row."""
        try:
            with self._db.transaction():  # a savepoint: a refused NOWAIT leaves the transaction usable
                return self._db.execute(self.LOCKED_ROW + " NOWAIT", params).fetchone()
        except _errors.LockNotAvailable:
            if self._row_lock is not None:
                raise StoreError(
                    f"{self._label}: session {name}'s row is locked by a transaction outside the lab"
                ) from None
        self.lock_waits += 1  # another transaction holds the row: wait for it, for real
        return self._db.execute(self.LOCKED_ROW, params).fetchone()

    def _row_is_locked(self, key: str) -> bool:
        """Ask the server, without waiting, whether another transaction holds the row (and let go at once)."""
        self._db.execute("BEGIN")
        try:
            self._db.execute("SELECT 1 FROM lab_sessions WHERE key = %s FOR UPDATE NOWAIT", (key,))
        except _errors.LockNotAvailable:
            return True
        finally:
            self._db.execute("ROLLBACK")
        return False

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
        """Version, history and one receipt in one statement (one snapshot, and no row lock: readers never wait),
        checked (:mod:`.rows`)."""
        if request_id is not None:
            check_text(self._label, "request id", request_id)
        note_shared_access(access_name(self._label), _row(name), "r")
        with self._operation("read", name):
            row = self._db.execute(self.READ, (request_id, key)).fetchone()
        return row_state(row, self._label, name)

    def receipt_ids(self, key: str, name: str) -> tuple[str, ...]:
        """The remembered request ids, oldest first."""
        note_shared_access(access_name(self._label), _row(name), "r")
        with self._operation("read", name):
            rows = self._db.execute(
                "SELECT request_id FROM lab_receipts WHERE session = %s ORDER BY seq, request_id", (key,)
            ).fetchall()
        return tuple(str(row[0]) for row in rows)

    @contextlib.contextmanager
    def row_held(self, name: str) -> Iterator[None]:
        """Hold session ``name``'s row locked in an open transaction until the block ends (then commit).

        What a worker does when it locks the session for the whole model call (pessimistic locking): every other
        worker's commit waits for it (up to its lock timeout). Reads do not wait (PostgreSQL's readers see the last
        committed row). This store's own commits inside the block run in the open transaction.
        """
        check_text(self._label, "session name", name)
        note_shared_access(access_name(self._label), _row(name), "w")
        with self._operation("hold", name, writes=True):
            found = self._db.execute("SELECT key FROM lab_sessions WHERE name = %s", (name,)).fetchone()
            if found is None:
                raise StoreError(f"{self._label}: no session {name}")
            key = str(found[0])
            with self._write_transaction(key, name) as write:
                self._locked_row(key, name, "", None)
                self._holding = True
                try:
                    yield
                finally:
                    self._holding = False
                write.commit = True

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


_kept: dict[tuple[str, str], tuple[Any, tuple[tuple[str, str], ...]]] = {}
"""Connections kept for ``PostgresStore(..., reuse=SLOT)``, with the timeouts they were given: a lesson set up
afresh for every run of an exploration would otherwise pay a new connection per worker per run."""
