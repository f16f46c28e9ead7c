"""What a store says when the database fails it: one :class:`StoreError` line, the same words on every store.

A driver's exception (``sqlite3.OperationalError``, ``psycopg.errors.AdminShutdown``...) tells a programmer which
C call failed; the person at the console needs to know what happened to *their* request and what to do. Each store
sorts its driver's errors into the few kinds below (:class:`Failure`) and this module words them, so a timeout, a
lost connection or a full disk reads the same on SQLite and on PostgreSQL:

- ``HELD``: another client held the row (SQLite: the database's write lock) for longer than the lock timeout;
- ``SLOW``: one statement ran longer than the statement timeout;
- ``LOST``: the connection to the server broke (stopped, restarted, network); the store reopens it next call;
- ``FULL``: the disk is full; ``READ_ONLY``: the database refuses writes;
- ``OTHER``: anything else, with the driver's first line.

What the message says about the request follows from *when* it failed: before ``COMMIT`` was sent nothing was
written; while ``COMMIT`` was on its way the outcome is unknown, and the caller's safe move is to retry with the same
request id (DUPLICATE if it had landed, COMMITTED once if not). A store never retries an operation itself.

Text is checked here too (:func:`check_text`): PostgreSQL cannot keep a NUL character and no UTF-8 database can
keep a lone surrogate, so every store refuses both, the memory store too (``VersionedSession`` calls it for every
store), before anything is written, with the same line.
"""

from __future__ import annotations

from enum import Enum

from lab.sessions.stores.store import StoreError


class Failure(Enum):
    """The kinds of database failure a user is told about (see the module docstring)."""

    HELD = "held"
    SLOW = "slow"
    LOST = "lost"
    FULL = "full"
    READ_ONLY = "read-only"
    OTHER = "other"


class Outcome(Enum):
    """What is known of the operation's writes when it failed."""

    NOTHING_WRITTEN = "nothing was written"
    UNKNOWN = "unknown"
    READ_ONLY = "a read"


def first_line(error: BaseException) -> str:
    """The driver's message, first line only, or the exception's type when it has none."""
    text = str(error).strip()
    return text.splitlines()[0] if text else type(error).__name__


def describe(
    label: str,
    failure: Failure,
    *,
    operation: str,
    session: str | None,
    detail: str,
    outcome: Outcome,
    seconds: float = 0.0,
    request_id: str | None = None,
) -> StoreError:
    """The one line for a failure of ``operation`` (``commit``, ``read``, ``open``...) on ``session``."""
    row = f"session {session}'s row" if session is not None else "the lab's tables"
    if failure is Failure.HELD:
        what = f"{row} is held by another client for over {seconds:g} s"
    elif failure is Failure.SLOW:
        what = f"the {operation} of {_whose(session)} ran for over {seconds:g} s (the statement timeout)"
    elif failure is Failure.LOST:
        what = f"the connection was lost during the {operation} of {_whose(session)} ({detail})"
    elif failure is Failure.FULL:
        what = f"the disk is full: the {operation} of {_whose(session)} cannot be written ({detail})"
    elif failure is Failure.READ_ONLY:
        what = f"the database is read-only: the {operation} of {_whose(session)} cannot be written ({detail})"
    else:
        what = f"the {operation} of {_whose(session)} failed: {detail}"
    return StoreError(f"{label}: {what}; {_advice(failure, outcome, request_id)}")


def _whose(session: str | None) -> str:
    return f"session {session}" if session is not None else "the store"


def _advice(failure: Failure, outcome: Outcome, request_id: str | None) -> str:
    """What happened to the request, and the caller's next move."""
    if outcome is Outcome.UNKNOWN:
        retry = f"request {request_id}" if request_id is not None else "the request"
        head = f"it may or may not have been committed: retry {retry} with the same request id (DUPLICATE if it was)"
    elif outcome is Outcome.NOTHING_WRITTEN:
        head = "nothing was written"
    else:
        head = "nothing was changed"
    if failure is Failure.LOST:
        return f"{head}; the store reconnects on the next call"
    if failure in (Failure.HELD, Failure.SLOW):
        return f"{head}; try again later"
    if failure is Failure.FULL:
        return f"{head}; free some disk space and try again"
    if failure is Failure.READ_ONLY:
        return f"{head}; use a writable database"
    return head


def kept_by_every_store(value: str) -> bool:
    """Whether every store keeps ``value`` (no NUL character, no lone surrogate): :func:`check_text` would pass."""
    if "\x00" in value:
        return False
    if value.isascii():
        return True  # no surrogate is ASCII: the encoding below would succeed
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def check_text(label: str, what: str, value: str) -> None:
    """Refuse text no store keeps (a NUL character, a lone surrogate), the same way on every store."""
    if "\x00" in value:
        raise StoreError(
            f"{label}: the {what} holds a NUL character (\\x00), which no store keeps; nothing was written"
        )
    if value.isascii():
        return  # no surrogate is ASCII (called for every text of every commit: the common case, cheaply)
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise StoreError(
            f"{label}: the {what} holds a lone surrogate, which is not text any store keeps; nothing was written"
        ) from None
