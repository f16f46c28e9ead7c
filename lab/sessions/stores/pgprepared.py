"""The PostgreSQL store's two hot statements, run as prepared statements on psycopg's libpq connection directly.

Every question a session answers runs two statements: the read of ``begin`` (:attr:`PostgresStore.READ`) and the
commit's one call (:attr:`OneStatementCommit.COMMIT_TICKET`). Measured on this project's 2-core machine with one
idle client (issue 24's last point), one round trip through psycopg's cursor (``connection.execute``) cost the
client about 90-150 us of CPU, of which the libpq send, the wait for the socket and the receive were 35-45 us; the
rest was psycopg's Python: a cursor object, the query converted from ``%s`` to ``$1``, each parameter adapted, the
prepared-statement cache consulted, the result's row built by its loaders. With 32 processes on one session the
machine's two cores are busy with exactly that, so every other client's round trip waits for a CPU (the
benchmark's 32-process cell, ``bench/bench_stores.py``). Here the two statements are prepared once per connection
and then each is one ``send_query_prepared`` and psycopg's own ``wait`` on ``generators.execute``: the same wire
messages as psycopg's own prepared statements (Bind, Describe, Execute, Sync: one round trip), the same
interruptible wait (Ctrl-C cancels the statement in the server), the same error classes
(``psycopg.errors.error_from_result``, so a lock or statement timeout, a full disk, a lost connection are sorted
as before, :meth:`PostgresStore._failure`), and no psycopg Python in between. Parameters and results are text;
the results are turned into the same Python values psycopg's loaders give (``int``, ``str``, ``bool``, ``None``),
so a row is checked exactly as before (:mod:`.rows`).

A connection's prepared statements live as long as the connection: they are remembered per connection object, so a
reopened connection (a server restart) prepares them again, and a connection kept for a lesson's slot keeps them.
A server that forgot them anyway (``DEALLOCATE ALL``) answers "prepared statement does not exist", which ran
nothing: they are prepared again and the statement sent once more.
"""

from __future__ import annotations

import hashlib
import weakref
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from lab.sessions.stores.pgsql import psycopg

TEXT = 25
INTEGER = 23
_COMMAND_OK = 1
_TUPLES_OK = 2
_UNKNOWN_STATEMENT = b"26000"  # invalid_sql_statement_name: the prepared statement does not exist
_DUPLICATE_STATEMENT = b"42P05"  # duplicate_prepared_statement: it exists already


@dataclass(frozen=True, slots=True)
class Prepared:
    """One statement prepared on every connection that runs it: its server-side ``name``, its ``sql`` with
    ``$1``... placeholders, and its parameters' type OIDs (``TEXT``, ``INTEGER``)."""

    name: bytes
    sql: str
    types: tuple[int, ...]


def prepared(sql: str, types: tuple[int, ...]) -> Prepared:
    """``sql`` written with psycopg's ``%s`` placeholders, as the store names it, prepared as ``$1``, ``$2``...
    Its name is made from its text, so a connection never runs another statement under the same name."""
    parts = sql.split("%s")
    if len(parts) - 1 != len(types):
        raise ValueError(f"{len(parts) - 1} placeholders, {len(types)} types")
    numbered = parts[0] + "".join(f"${n}{part}" for n, part in enumerate(parts[1:], start=1))
    digest = hashlib.sha256(numbered.encode()).hexdigest()[:16]
    return Prepared(f"lab_{digest}".encode(), numbered, types)


_ready: weakref.WeakKeyDictionary[Any, set[bytes]] = weakref.WeakKeyDictionary()
"""The statements prepared on each live connection (a psycopg connection object)."""


def run(db: Any, statement: Prepared, params: Sequence[bytes | None]) -> Any:
    """Run ``statement`` on ``db`` (a psycopg connection) with text ``params``; its one result (a libpq
    ``PGresult``), or the server's error raised as psycopg raises it."""
    with db.lock:
        ready = _ready.get(db)
        if ready is None:
            ready = _ready[db] = set()
        if statement.name not in ready:
            _prepare(db, statement)
            ready.add(statement.name)
        result = _send(db, statement, params)
        if result.status != _TUPLES_OK and result.error_field(_SQLSTATE) == _UNKNOWN_STATEMENT:
            ready.clear()  # the server forgot them (nothing ran): prepare again, send again
            _prepare(db, statement)
            ready.add(statement.name)
            result = _send(db, statement, params)
        if result.status != _TUPLES_OK:
            raise _error(db, result)
        return result


def prepare(db: Any, *statements: Prepared) -> None:
    """Prepare ``statements`` on ``db`` now, one round trip each, if they are not yet (a new store does, so that
    its first ``begin`` and commit are one round trip like every other)."""
    with db.lock:
        ready = _ready.get(db)
        if ready is None:
            ready = _ready[db] = set()
        for statement in statements:
            if statement.name not in ready:
                _prepare(db, statement)
                ready.add(statement.name)


def _prepare(db: Any, statement: Prepared) -> None:
    pgconn = db.pgconn
    pgconn.send_prepare(statement.name, statement.sql.encode(), param_types=statement.types)
    result = _last(db.wait(psycopg.generators.execute(pgconn)))
    if result.status != _COMMAND_OK and result.error_field(_SQLSTATE) != _DUPLICATE_STATEMENT:
        raise _error(db, result)


def _send(db: Any, statement: Prepared, params: Sequence[bytes | None]) -> Any:
    pgconn = db.pgconn
    pgconn.send_query_prepared(statement.name, params)
    return _last(db.wait(psycopg.generators.execute(pgconn)))


def _last(results: list[Any]) -> Any:
    if not results:
        raise psycopg.errors.InternalError("got no result from the query")
    return results[-1]


def _error(db: Any, result: Any) -> Exception:
    """The exception psycopg's cursor raises for ``result``."""
    assert psycopg is not None
    if result.status == psycopg.pq.ExecStatus.FATAL_ERROR:
        return psycopg.errors.error_from_result(result, encoding=db.info.encoding)
    return psycopg.errors.InternalError(f"unexpected result status from query: {result.status}")


_SQLSTATE = 67  # PG_DIAG_SQLSTATE ('C'), libpq's field code for the error's SQLSTATE


def read_row(result: Any, start: int, encoding: str) -> tuple[object, ...]:
    """A read's five columns (version, history, question, answer, largest seq: :data:`~.rows.READ_COLUMNS`) from
    column ``start`` of ``result``'s first row, as psycopg's loaders give them (``int``, ``str``, ``None``)."""
    value = result.get_value
    version, history = value(0, start), value(0, start + 1)
    question, answer, max_seq = value(0, start + 2), value(0, start + 3), value(0, start + 4)
    return (
        None if version is None else int(version),
        None if history is None else history.decode(encoding),
        None if question is None else question.decode(encoding),
        None if answer is None else answer.decode(encoding),
        None if max_seq is None else int(max_seq),
    )
