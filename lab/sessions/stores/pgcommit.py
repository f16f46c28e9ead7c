"""The PostgreSQL commit: one statement, its own transaction, one round trip.

A session commits a ticket through :meth:`OneStatementCommit.commit_ticket`, one statement
(:attr:`OneStatementCommit.COMMIT_TICKET`) that reads the row and, when that read allows the commit, calls the
server-side function :data:`ONE_STEP_FUNCTION`, which reads again, decides and writes or refuses, all in the
server: no read before it, and a refusal takes no lock and writes nothing. ``commit_round``
(:attr:`OneStatementCommit.COMMIT_ROUND`) is the same compare-and-set for a session that read the row itself (the
fallback, and within ``row_held``).

SQLite commits step by step under its write lock (:mod:`.commits`). On PostgreSQL the same decision is one statement
(the function's call, or :attr:`OneStatementCommit.COMMIT_ROUND`), so that no client ever holds the session's row
across a round trip: the old commit locked the row, then read, then decided, each a round trip, and committed its
refusals too, so with many processes on one session each commit waited behind the refusals of the last and each
refusal synced the WAL (26.8 commits/s at 8 processes and 7.9 at 32 in issue 24's measurement; 322 syncs for 71
COMMITTED). Now a commit that finds another in progress waits for it inside the server (the function: on a shared
advisory lock; ``COMMIT_ROUND``: for the row lock) and re-checks the version when it is let go, and a refusal writes
nothing.
"""

from __future__ import annotations

import contextlib
from typing import Any

from lab.hooks import note_shared_access
from lab.messages import Message
from lab.sessions.stores.failures import Outcome
from lab.sessions.stores.pgprepared import INTEGER, TEXT, prepared, read_row, run
from lab.sessions.stores.pgrow import RowHolding
from lab.sessions.stores.pgsql import RECEIPT_COUNTS
from lab.sessions.stores.pgsql import errors as _errors
from lab.sessions.stores.rows import Histories, check_sequence
from lab.sessions.stores.store import Decided, StoreError, access_name, encode_history
from lab.sessions.stores.store import row_name as _row

ONE_STEP_FUNCTION = """
CREATE OR REPLACE FUNCTION lab_commit_ticket(p_key text, p_expected integer, p_base text, p_history text,
    p_request_id text, p_question text, p_answer text, p_capacity integer)
RETURNS TABLE (moved boolean, waited boolean, version integer, history text, question text, answer text,
    max_seq integer)
LANGUAGE plpgsql VOLATILE AS $body$
DECLARE
  v integer; h text; q text; a text; m integer; w boolean := false;
BEGIN
  SELECT s.version, s.history, r.question, r.answer,
         (SELECT max(x.seq) FROM lab_receipts x WHERE x.session = s.key)
    INTO v, h, q, a, m
    FROM lab_sessions s LEFT JOIN lab_receipts r ON r.session = s.key AND r.request_id = p_request_id
    WHERE s.key = p_key;
  IF NOT FOUND THEN
    RETURN;
  END IF;
  IF q IS NULL AND a IS NULL AND v = p_expected AND h = p_base THEN
    IF NOT pg_try_advisory_xact_lock(28237, hashtext(p_key)) THEN
      w := true;
      PERFORM pg_advisory_xact_lock_shared(28237, hashtext(p_key));
    END IF;
    UPDATE lab_sessions s SET version = s.version + 1, history = p_history
      WHERE s.key = p_key AND s.version = p_expected AND s.history = p_base
        AND NOT EXISTS (SELECT 1 FROM lab_receipts r WHERE r.session = p_key
                        AND (r.request_id = p_request_id OR r.seq > p_expected))
        AND (SELECT count(*) = count(DISTINCT r.seq) FROM lab_receipts r WHERE r.session = p_key);
    IF FOUND THEN
      INSERT INTO lab_receipts (session, request_id, seq, question, answer)
        VALUES (p_key, p_request_id, p_expected + 1, p_question, p_answer);
      DELETE FROM lab_receipts r WHERE r.session = p_key AND r.seq <= p_expected + 1 - p_capacity;
      RETURN QUERY SELECT true, w, p_expected + 1, p_history, NULL::text, NULL::text, p_expected + 1;
      RETURN;
    END IF;
    PERFORM set_config('synchronous_commit', 'off', true);
    SELECT s.version, s.history, r.question, r.answer,
           (SELECT max(x.seq) FROM lab_receipts x WHERE x.session = s.key)
      INTO v, h, q, a, m
      FROM lab_sessions s LEFT JOIN lab_receipts r ON r.session = s.key AND r.request_id = p_request_id
      WHERE s.key = p_key;
    IF NOT FOUND THEN
      RETURN;
    END IF;
  END IF;
  RETURN QUERY SELECT false, w, v, h, q, a, m;
END
$body$
"""
"""A whole commit decision in the server, one call, its own transaction (a VOLATILE function: each statement in
it sees what committed before it began). In order:

1. **read** the row and the request id's receipt, as :meth:`PostgresStore.read` does: when it already refuses the
   commit (a receipt: DUPLICATE or ID_CONFLICT; another version: STALE) nothing more is done, so a refusal takes
   no lock, has no transaction id, writes nothing and syncs nothing;
2. **wait for a commit in flight**, without locking the row: an exclusive advisory lock on the session (the
   ``(28237, hashtext(key))`` pair) is taken if free; if another commit holds it, a shared one is waited for,
   which the holder gives back only once its commit is visible, and which every waiter gets at once. So the
   commits that lost a race wake together and each finds the row moved, instead of queueing one after another
   for the row's lock and each locking the row's new version to re-check it (what a waiting ``UPDATE`` does);
3. **the compare-and-set**: version and history still the ticket's (``p_base``, the history the ticket was built
   on, so the new history ``p_history`` extends what the row holds), no receipt of the request id, no receipt past
   the version, no two receipts of one sequence number; then the receipt stored and the oldest evicted;
4. refused there after all (another commit landed meanwhile, or a transaction outside the lab held the row): read
   again and return that. Such a refusal may have locked the row while re-checking it, which gives it a
   transaction id to commit: it commits without waiting for a WAL sync, having written no data to lose.

It returns one row, ``(moved, waited, version, history, question, answer, max_seq)``: whether it committed and
whether it waited for another commit in flight (step 2), and otherwise
the row its decision saw (a read's columns, checked like a read, so a damaged row is refused here too); no row
when the session is gone. Its name changes whenever its body does: a database may hold a function written by
another version of the lab."""

ONE_STEP_NAME = "lab_commit_ticket"


class OneStatementCommit(RowHolding):
    """``commit_ticket`` and ``commit_round`` of a PostgreSQL store."""

    COMMIT_TICKET = (
        "WITH seen AS MATERIALIZED (SELECT s.version, s.history, r.question, r.answer,"
        " (SELECT max(x.seq) FROM lab_receipts x WHERE x.session = s.key) AS max_seq,"
        " (r.question IS NULL AND r.answer IS NULL AND s.version = %s AND s.history = %s) AS open"
        " FROM lab_sessions s LEFT JOIN lab_receipts r ON r.session = s.key AND r.request_id = %s WHERE s.key = %s)"
        " SELECT false AS moved, false AS waited, version, history, question, answer, max_seq FROM seen"
        " WHERE open IS NOT TRUE"
        " UNION ALL SELECT f.moved, f.waited, f.version, f.history, f.question, f.answer, f.max_seq FROM seen"
        f" CROSS JOIN LATERAL (SELECT * FROM {ONE_STEP_NAME}(%s, %s, %s, %s, %s, %s, %s, %s)"
        " WHERE seen.open IS TRUE) f"
    )
    """One round trip, one statement: the read of the function's step 1, in plain SQL, and the call of
    :data:`ONE_STEP_FUNCTION` only when that read allows the commit (``open``). A commit the read refuses
    (another version: STALE; a receipt: DUPLICATE or ID_CONFLICT) returns the row it read and never enters the
    function: measured on the 2-core machine, a refusal cost the server's backend about 90 us of CPU through
    the function (its call, two queries run through SPI, its result materialized) and about 75 through this
    statement, a plain read about 60. The refusal is decided on exactly the function's own test, on the same
    columns, and a commit the read allows runs the whole function as before (which reads again: a commit that
    landed in between is found there)."""
    COMMIT_TICKET_PREPARED = prepared(
        COMMIT_TICKET, (INTEGER, TEXT, TEXT, TEXT, TEXT, INTEGER, TEXT, TEXT, TEXT, TEXT, TEXT, INTEGER)
    )
    """:attr:`COMMIT_TICKET` as the statement prepared on each connection (:mod:`.pgprepared`)."""

    _one_step: bool
    """Whether the database has :data:`ONE_STEP_FUNCTION` (a user allowed to create tables but not functions, or
    a database whose tables another user made, may lack it: then sessions commit the ordinary way)."""
    _histories: Histories

    def commit_ticket(
        self,
        key: str,
        name: str,
        *,
        version: int,
        base: tuple[Message, ...],
        history: tuple[Message, ...],
        request_id: str,
        question: str,
        answer: str,
        receipt_capacity: int,
    ) -> Decided | None:
        """Commit a ticket built on ``version`` and ``base`` (its history) in one round trip, the decision made in
        the server (:data:`ONE_STEP_FUNCTION`): committed, or what the refusal saw, from which the session tells
        DUPLICATE, ID_CONFLICT and STALE. ``None`` when this store does not decide in one step here (within
        :meth:`row_held`, where the lab models the row lock, or without the function): the session then reads
        and decides itself (:meth:`commit_round`)."""
        if self._holding or self._row_lock is not None or not self._one_step:
            return None
        self._check_writable(name, request_id, question, answer, history)
        note_shared_access(access_name(self._label), _row(name), "w")
        histories = self._histories
        with self._operation("commit", name, request_id=request_id, writes=True):
            db = self._db
            encoding = db.info.encoding
            key_ = key.encode(encoding)
            version_ = str(version).encode()
            base_ = histories.encode(base).encode(encoding)
            request_id_ = request_id.encode(encoding)
            params = [
                *(version_, base_, request_id_, key_),  # the read that decides whether the function is called
                *(key_, version_, base_, encode_history(history).encode(encoding), request_id_),
                *(question.encode(encoding), answer.encode(encoding), str(receipt_capacity).encode()),
            ]
            self._outcome = Outcome.UNKNOWN  # one statement, its own transaction: it may land and its answer be lost
            result = run(db, self.COMMIT_TICKET_PREPARED, params)
            self._outcome = Outcome.NOTHING_WRITTEN
        if result.ntuples == 0:
            raise StoreError(f"{self._label}: session {name} is gone (its row was deleted); open it again")
        value = result.get_value
        if value(0, 1) == b"t":
            self.lock_waits += 1  # it waited for another commit in flight (step 2 of the function)
        if value(0, 0) == b"t":
            return Decided(True, version + 1)
        seen = histories.row_state(read_row(result, 2, encoding), self._label, name)  # checked like a read
        return Decided(False, seen.version, seen.receipt)

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
