"""The commit of a round, step by step, and what every SQL store shares: one error line, write transactions.

SQLite commits a round in these steps (PostgreSQL runs the same decision as one statement, see
:attr:`lab.sessions.stores.postgres.PostgresStore.COMMIT_ROUND`, so that no client holds its row across a round
trip). The write transaction begins holding the session's row (SQLite's ``BEGIN IMMEDIATE`` takes the database's
write lock), waiting for it no longer than the lock timeout. Then, under that lock:

1. **read and decide**: the row's version and whether the request id has a receipt. A commit that will be STALE,
   DUPLICATE or ID_CONFLICT stops here and *rolls back*: it wrote nothing, so it costs no WAL record and no sync
   (before issue 24, PostgreSQL's refusals committed a transaction that had taken the row lock, and synced the
   WAL for each: 322 syncs for 71 COMMITTED and 297 refusals in one measurement);
2. **write**: the compare-and-set on the version, the new history, the receipt stored and the oldest evicted;
3. ``COMMIT``, the one step whose outcome can be unknown (a connection lost while it was on its way).

Each store names every statement it runs as a class attribute, where it can be read next to its schema, and
supplies its own way to begin and end a write (:meth:`SqlCommits._begin_write`, :meth:`SqlCommits._end_write`)
and to sort its driver's errors (:meth:`SqlCommits._failure`). Turning every driver error into one
:class:`StoreError` line (:meth:`SqlCommits._operation`) and refusing text no store keeps live here, once.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any, ClassVar

from lab.hooks import note_shared_access
from lab.messages import Message
from lab.sessions.stores.failures import Failure, Outcome, check_text, describe, first_line
from lab.sessions.stores.rows import check_sequence, checked_version
from lab.sessions.stores.store import StoreError, access_name, encode_history, row_name


class _Write:
    """One write transaction's decision: it commits only if the block says so (``commit = True``) and ends
    without raising; otherwise it rolls back."""

    __slots__ = ("commit",)

    def __init__(self) -> None:
        self.commit = False


class _Operation:
    """The ``with`` block of :meth:`SqlCommits._operation` (a class, not a generator: it wraps every statement of
    every store call, and a generator-based context manager costs several times as much to enter and leave)."""

    __slots__ = ("_operation", "_request_id", "_session", "_store", "_writes")

    def __init__(
        self, store: SqlCommits, operation: str, session: str | None, request_id: str | None, writes: bool
    ) -> None:
        self._store = store
        self._operation = operation
        self._session = session
        self._request_id = request_id
        self._writes = writes

    def __enter__(self) -> None:
        store = self._store
        store._prepare()
        store._outcome = Outcome.NOTHING_WRITTEN if self._writes else Outcome.READ_ONLY

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None, _trace: object) -> None:
        if error is None or isinstance(error, StoreError) or not isinstance(error, Exception):
            return
        store = self._store
        sorted_as = store._failure(error)
        if sorted_as is None:
            return
        failure, seconds = sorted_as
        if failure is not Failure.LOST and store._outcome is Outcome.UNKNOWN:
            store._outcome = Outcome.NOTHING_WRITTEN  # the server answered with an error: it rolled back
        raise describe(
            store._label,
            failure,
            operation=self._operation,
            session=self._session,
            detail=first_line(error),
            outcome=store._outcome,
            seconds=seconds,
            request_id=self._request_id,
        ) from None


class SqlCommits:
    """:meth:`commit_round` and :meth:`overwrite` of a SQL store, from its statements and its write transaction."""

    LOCKED_ROW: ClassVar[str]
    """Parameters ``(request_id, key, key)``; under the write lock: ``(version, receipt taken, max seq, receipts,
    distinct seqs)``, no row when the session is gone."""
    COMPARE_AND_SET: ClassVar[str]
    """Parameters ``(history, key, expected_version)``; moves the version up by one only if it is still the one
    read: one row changed, or zero when another commit moved it first."""
    OVERWRITE: ClassVar[str]
    """Parameters ``(version, history, key)``; writes without looking (the lost-update mistake)."""
    STORE_RECEIPT: ClassVar[str]
    """Parameters ``(key, request_id, seq, question, answer)``; inserts the receipt, or replaces one of that id."""
    EVICT_RECEIPTS: ClassVar[str]
    """Parameters ``(key, oldest_seq_to_drop)``; forgets the receipts past the capacity."""

    _db: Any  # the store's connection: sqlite3's or psycopg's, whose execute() both return a cursor
    _label: str
    _outcome: Outcome = Outcome.NOTHING_WRITTEN

    # -- what each store supplies ------------------------------------------------------------------------------

    def _begin_write(self, key: str, name: str) -> None:
        """Begin a transaction holding session ``key``'s row (bounded by the lock timeout)."""
        raise NotImplementedError

    def _end_write(self, commit: bool) -> None:
        """``COMMIT`` (``commit``) or ``ROLLBACK`` the transaction :meth:`_begin_write` began."""
        raise NotImplementedError

    def _failure(self, error: BaseException) -> tuple[Failure, float] | None:
        """The kind of a driver error and the timeout it ran past (0 if none); ``None`` when ``error`` is not the
        driver's (it is then raised as it is)."""
        raise NotImplementedError

    def _prepare(self) -> None:
        """Before an operation: PostgreSQL reopens a connection it lost (nothing to do for SQLite)."""

    def _execute(self, statement: str, params: Any = ()) -> Any:
        """Run one statement of a write transaction (PostgreSQL sends a pending ``BEGIN`` with it)."""
        return self._db.execute(statement, params)

    def _read_locked(self, params: tuple[str, str, str], name: str, expected_version: int | None) -> Any:
        """The :attr:`LOCKED_ROW` row, in the write transaction (PostgreSQL takes the row lock here)."""
        return self._execute(self.LOCKED_ROW, params).fetchone()

    def _final_commit(self) -> bool:
        """Whether ending the write with a commit makes it durable (not so for a savepoint within a held row)."""
        return True

    # -- shared ----------------------------------------------------------------------------------------------------

    def _operation(
        self, operation: str, session: str | None, *, request_id: str | None = None, writes: bool = False
    ) -> _Operation:
        """Run one store operation: every driver error inside becomes one :class:`StoreError` line saying what
        happened, whether anything was written, and what to do."""
        return _Operation(self, operation, session, request_id, writes)

    @contextlib.contextmanager
    def _write_transaction(self, key: str, name: str) -> Iterator[_Write]:
        """A transaction holding the row: committed when the block set ``commit`` and ended normally, rolled back
        otherwise. From the moment ``COMMIT`` is sent until it answers, the outcome is unknown."""
        write = _Write()
        self._begin_write(key, name)
        try:
            yield write
        except BaseException:
            with contextlib.suppress(Exception):  # the error that got us here is the one to report
                self._end_write(False)
            raise
        if write.commit:
            final = self._final_commit()
            if final:
                self._outcome = Outcome.UNKNOWN
            self._end_write(True)
            if final:
                self._outcome = Outcome.NOTHING_WRITTEN
        else:
            self._end_write(False)

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
        """One transaction: read and decide under the row lock (a refusal rolls back, writing nothing), then the
        compare-and-set, the new history, the receipt stored and the oldest evicted."""
        self._check_writable(name, request_id, question, answer, history)
        note_shared_access(access_name(self._label), row_name(name), "w")
        operation = self._operation("commit", name, request_id=request_id, writes=True)
        with operation, self._write_transaction(key, name) as write:
            version, taken = self._locked_row(key, name, request_id, expected_version)
            if taken or version != expected_version:
                return False  # DUPLICATE, ID_CONFLICT or STALE: rolled back, nothing written, nothing synced
            written = self._write_round(key, expected_version, history, request_id, question, answer, receipt_capacity)
            write.commit = written
            return written

    def overwrite(
        self,
        key: str,
        name: str,
        *,
        version: int,
        history: tuple[Message, ...],
        request_id: str,
        question: str,
        answer: str,
        receipt_capacity: int,
    ) -> None:
        """Last writer wins: no compare-and-set (the mistake :class:`lab.mutants.InProcessLockSession` makes)."""
        self._check_writable(name, request_id, question, answer, history)
        note_shared_access(access_name(self._label), row_name(name), "w")
        operation = self._operation("commit", name, request_id=request_id, writes=True)
        with operation, self._write_transaction(key, name) as write:
            self._execute(self.OVERWRITE, (version, encode_history(history), key))
            self._store_receipt(key, version, request_id, question, answer, receipt_capacity)
            write.commit = True

    def _locked_row(self, key: str, name: str, request_id: str, expected_version: int | None) -> tuple[int, bool]:
        """Under the row lock: the version (checked, see :mod:`lab.sessions.stores.rows`) and whether
        ``request_id`` has a receipt. ``expected_version`` is the version a commit was built on (``None``: the row
        is to be held whatever it holds); a store may use it to refuse without the exclusive lock."""
        row = self._read_locked((request_id, key, key), name, expected_version)
        if row is None:
            raise StoreError(f"{self._label}: session {name} is gone (its row was deleted); open it again")
        version = checked_version(row[0], self._label, name)
        check_sequence(version, row[2], self._label, name, count=row[3], distinct=row[4])
        return version, bool(row[1])

    def _check_writable(
        self, name: str, request_id: str, question: str, answer: str, history: tuple[Message, ...]
    ) -> None:
        """Refuse, before anything is written, text no store keeps (:func:`check_text`)."""
        for what, value in (("session name", name), ("request id", request_id), ("question", question)):
            check_text(self._label, what, value)
        check_text(self._label, "answer", answer)
        for message in history:
            check_text(self._label, "history", message.content)

    def _write_round(
        self,
        key: str,
        expected_version: int,
        history: tuple[Message, ...],
        request_id: str,
        question: str,
        answer: str,
        capacity: int,
    ) -> bool:
        """The write of a commit decided under the row lock: the compare-and-set, then the receipt stored and the
        oldest evicted. False if the compare-and-set changed nothing (it cannot under the row lock; then nothing
        else is written either)."""
        moved = self._execute(self.COMPARE_AND_SET, (encode_history(history), key, expected_version))
        if moved.rowcount != 1:
            return False
        self._store_receipt(key, expected_version + 1, request_id, question, answer, capacity)
        return True

    def _store_receipt(self, key: str, seq: int, request_id: str, question: str, answer: str, capacity: int) -> None:
        self._execute(self.STORE_RECEIPT, (key, request_id, seq, question, answer))
        self._execute(self.EVICT_RECEIPTS, (key, seq - capacity))
