"""The PostgreSQL commit: one statement, its own transaction, one round trip.

SQLite commits step by step under its write lock (:mod:`.commits`). On PostgreSQL the same decision is one
statement (:attr:`OneStatementCommit.COMMIT_ROUND`), so that no client ever holds the session's row across a round
trip: the old commit locked the row, then read, then decided, each a round trip, and committed its refusals too,
so with many processes on one session each commit waited behind the refusals of the last and each refusal synced
the WAL (26.8 commits/s at 8 processes and 7.9 at 32 in issue 24's measurement; 322 syncs for 71 COMMITTED).
Now a commit that finds another in progress waits inside the server for its row lock and re-checks the version
when it is let go, and a refusal writes nothing.
"""

from __future__ import annotations

import contextlib
from typing import Any

from lab.hooks import note_shared_access
from lab.messages import Message
from lab.sessions.stores.failures import Outcome
from lab.sessions.stores.pgrow import RowHolding
from lab.sessions.stores.pgsql import RECEIPT_COUNTS
from lab.sessions.stores.pgsql import errors as _errors
from lab.sessions.stores.rows import check_sequence
from lab.sessions.stores.store import StoreError, access_name, encode_history
from lab.sessions.stores.store import row_name as _row


class OneStatementCommit(RowHolding):
    """``commit_round`` of a PostgreSQL store."""

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
        + RECEIPT_COUNTS.replace("%s", "%(key)s")
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
