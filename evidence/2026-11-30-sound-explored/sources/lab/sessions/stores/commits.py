"""The commit of a round, step by step, shared by the SQL stores: one write transaction, the same steps on each.

SQLite and PostgreSQL commit a round the same way: look up the request id's receipt, then the compare-and-set on
the version (zero rows: another commit got there first), then store the receipt and evict the oldest. What differs
is the SQL (placeholders, the upsert) and how the write transaction begins (SQLite's ``BEGIN IMMEDIATE``,
PostgreSQL's row lock). So each store names every statement it runs as a class attribute, where it can be read next
to its schema, and opens its own transaction (:meth:`SqlCommits._write_transaction`); the steps live here, once.
"""

from __future__ import annotations

import contextlib
from typing import Any, ClassVar

from lab.hooks import note_shared_access
from lab.messages import Message
from lab.sessions.stores.store import access_name, encode_history, row_name


class SqlCommits:
    """:meth:`commit_round` and :meth:`overwrite` of a SQL store, from its statements and its write transaction."""

    RECEIPT_TAKEN: ClassVar[str]
    """Parameters ``(key, request_id)``; a row when the session already has a receipt for the request id."""
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

    def _write_transaction(self, key: str, name: str) -> contextlib.AbstractContextManager[None]:
        """A transaction for writing session ``key``'s row: committed when the block ends, rolled back when it
        raises. A block that wrote nothing commits nothing."""
        raise NotImplementedError

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
        """One transaction: receipt lookup, compare-and-set, new history, receipt stored and the oldest evicted."""
        note_shared_access(access_name(self._label), row_name(name), "w")
        with self._write_transaction(key, name):
            if self._db.execute(self.RECEIPT_TAKEN, (key, request_id)).fetchone() is not None:
                return False  # the request id committed already: nothing written
            moved = self._db.execute(self.COMPARE_AND_SET, (encode_history(history), key, expected_version))
            if moved.rowcount != 1:  # zero rows: another commit moved the version first
                return False
            self._store_receipt(key, expected_version + 1, request_id, question, answer, receipt_capacity)
            return True

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
        note_shared_access(access_name(self._label), row_name(name), "w")
        with self._write_transaction(key, name):
            self._db.execute(self.OVERWRITE, (version, encode_history(history), key))
            self._store_receipt(key, version, request_id, question, answer, receipt_capacity)

    def _store_receipt(self, key: str, seq: int, request_id: str, question: str, answer: str, capacity: int) -> None:
        self._db.execute(self.STORE_RECEIPT, (key, request_id, seq, question, answer))
        self._db.execute(self.EVICT_RECEIPTS, (key, seq - capacity))
