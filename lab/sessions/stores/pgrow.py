"""Holding a PostgreSQL row: the write transactions of ``overwrite`` and ``row_held``, and the lab's model of the lock.

A commit never holds the row across a round trip (:mod:`.pgcommit`); two things still do. ``row_held()`` is
pessimistic locking on purpose (the ``row_lock_wait`` lesson: a worker keeps the row locked while its model
answers), and ``overwrite`` is the mutant's write without compare-and-set. Both run in a write transaction that
locks the row with ``SELECT ... FOR UPDATE``, first with ``NOWAIT`` (a refusal is counted in ``lock_waits``), then
waiting, up to the lock timeout.

Where the lab models the row lock (``row_lock=``: a lock the scheduler sees, standing for the server's), it is taken
before the transaction begins and given back after it ends, so a worker that would wait inside the server waits on
the lab's lock instead; the statement then runs with ``NOWAIT`` only, and a refusal means a transaction outside the
lab holds the row.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any, Protocol

from lab.hooks import note_shared_access
from lab.sessions.stores.commits import SqlCommits
from lab.sessions.stores.failures import check_text
from lab.sessions.stores.pgsql import RECEIPT_COUNTS
from lab.sessions.stores.pgsql import errors as _errors
from lab.sessions.stores.store import StoreError, access_name
from lab.sessions.stores.store import row_name as _row


class RowLockModel(Protocol):
    """A lock the scheduler sees, standing for PostgreSQL's lock on a row (``self.lab.lock("row s1")``)."""

    def acquire(self) -> bool: ...

    def release(self) -> None: ...

    def locked(self) -> bool: ...


class RowHolding(SqlCommits):
    """``row_held()`` and the write transactions of a PostgreSQL store (:class:`SqlCommits`' hooks)."""

    LOCKED_ROW = (
        "SELECT s.version, EXISTS (SELECT 1 FROM lab_receipts r WHERE r.session = s.key AND r.request_id = %s),"
        f" n.m, n.c, n.d FROM lab_sessions s, {RECEIPT_COUNTS} n WHERE s.key = %s FOR UPDATE OF s"
    )

    _row_lock: RowLockModel | None
    _model_held: bool
    _holding: bool
    lock_waits: int

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
