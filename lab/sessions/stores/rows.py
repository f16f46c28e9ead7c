"""Rows are checked when they are read: a damaged row is refused, never built upon.

A database row can be changed by anything that can reach the database: a hand-written ``UPDATE``, a migration
gone wrong, another program. The session builds every commit on what it read, so a damaged row would spread: a
history holding a lone message gets a pair appended and is stored as ``[user, user, assistant]``, breaking the
whole-pairs promise for good; a version lowered by hand makes the next commit's receipt take a sequence number a
receipt already has. So every read decodes the row here and checks what the session relies on:

- the version is a whole number, at least 0, and at least every receipt's sequence number (a receipt's ``seq`` is
  the version its commit produced), so the next commit's receipt cannot take a number a receipt already has;
- before a commit builds on the row, also that no two receipts share a sequence number. Two receipts of one
  sequence number are what a lost update leaves behind (two commits wrote one version: the mutant's lesson,
  ``two_workers_in_process_lock``, shows exactly that), so a plain read still shows such a row as it is, and only
  building on it is refused;
- the history is JSON, a list of ``[role, content]`` items, user then assistant, in whole pairs, each content a
  string the stores can keep, and no more pairs than commits (the version);
- a receipt read with the row has a question and an answer that are both strings.

Anything else is a :class:`StoreError` naming the store, the session and what is wrong, and nothing is written.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from lab.messages import Message, Role
from lab.sessions.stores.store import RowState, StoreError

READ_COLUMNS = 5
"""What a read selects, in order: version, history, the receipt's question and answer (``NULL`` when there is
none), and the largest ``seq`` of all the session's receipts."""


def damaged(label: str, name: str, what: str) -> StoreError:
    """The one line for a row that cannot be trusted."""
    return StoreError(
        f"{label}: session {name}'s row is damaged ({what}); nothing was built on it: repair the row by hand "
        "or drop the session"
    )


def checked_version(value: object, label: str, name: str) -> int:
    """The version column, refused unless it is a whole number >= 0 (``bool`` is not a number here)."""
    if not isinstance(value, int) or isinstance(value, bool) or value < 0:
        raise damaged(label, name, f"version {value!r} is not a whole number >= 0")
    return value


def check_sequence(
    version: int, max_seq: object, label: str, name: str, *, count: object = 0, distinct: object = 0
) -> None:
    """Receipts' sequence numbers: none above the version; and, given ``count`` and ``distinct`` (the commit's
    check), no two equal."""
    if max_seq is not None and (not isinstance(max_seq, int) or max_seq > version):
        raise damaged(label, name, f"a receipt has sequence number {max_seq!r}, past version {version}")
    if count != distinct:
        raise damaged(label, name, f"{count} receipts share {distinct} sequence numbers")


def decode_history(text: object, version: int, label: str, name: str) -> tuple[Message, ...]:
    """The history column as messages, refused unless it is whole user/assistant pairs of well-formed messages."""
    if not isinstance(text, str):
        raise damaged(label, name, f"history is a {type(text).__name__}, not JSON text")
    try:
        items = json.loads(text)
    except ValueError as error:
        raise damaged(label, name, f"history is not JSON: {error}") from None
    if not isinstance(items, list):
        raise damaged(label, name, f"history is a JSON {type(items).__name__}, not a list")
    messages: list[Message] = []
    for index, item in enumerate(items):
        expected = Role.USER if index % 2 == 0 else Role.ASSISTANT
        if not (isinstance(item, list) and len(item) == 2 and all(isinstance(part, str) for part in item)):
            raise damaged(label, name, f"history item {index} is not a [role, content] pair of strings")
        role, content = item
        if role != expected:
            raise damaged(label, name, f"history item {index} is {role!r} where {expected} was due")
        if "\x00" in content or _has_surrogate(content):
            raise damaged(label, name, f"history item {index} holds a character no store keeps")
        messages.append(Message(expected, content))
    if len(messages) % 2:
        raise damaged(label, name, f"history holds {len(messages)} messages, not whole pairs")
    if len(messages) // 2 > version:
        raise damaged(label, name, f"history holds {len(messages) // 2} pairs after only {version} commits")
    return tuple(messages)


def row_state(row: Sequence[Any] | None, label: str, name: str) -> RowState:
    """A read's row (:data:`READ_COLUMNS`) as a checked :class:`RowState`; no row at all is a :class:`StoreError`
    (the session was dropped under the reader)."""
    if row is None:
        raise StoreError(f"{label}: session {name} is gone (its row was deleted); open it again to start afresh")
    version = checked_version(row[0], label, name)
    check_sequence(version, row[4], label, name)
    history = decode_history(row[1], version, label, name)
    return RowState(version, history, receipt_of(row[2], row[3], label, name))


def receipt_of(question: object, answer: object, label: str, name: str) -> tuple[str, str] | None:
    """A receipt's ``(question, answer)`` as read (both ``NULL``: no receipt), refused unless both are text."""
    if question is None and answer is None:
        return None
    if not (isinstance(question, str) and isinstance(answer, str)):
        raise damaged(label, name, "a receipt's question or answer is not text")
    return question, answer


def _has_surrogate(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False
