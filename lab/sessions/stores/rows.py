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
from lab.sessions.stores.store import RowState, StoreError, encode_history

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
    messages = _messages(text, label, name)
    _check_pairs(messages, version, label, name)
    return messages


def _messages(text: object, label: str, name: str) -> tuple[Message, ...]:
    """Every check of the history that does not depend on the version, in the order the items come."""
    if not isinstance(text, str):
        raise damaged(label, name, f"history is a {type(text).__name__}, not JSON text")
    try:
        items = json.loads(text)
    except ValueError as error:
        raise damaged(label, name, f"history is not JSON: {error}") from None
    if not isinstance(items, list):
        raise damaged(label, name, f"history is a JSON {type(items).__name__}, not a list")
    # A NUL or a lone surrogate can only come from a \u escape: JSON text read from a database is a str
    # decoded from UTF-8 (no lone surrogates), and json.loads refuses a raw control character inside a string.
    escapes = "\\u" in text
    messages: list[Message] = []
    for index, item in enumerate(items):
        user = not index % 2
        # json.loads makes exact lists and strs, so type() is isinstance() here, and cheaper
        if not (type(item) is list and len(item) == 2 and type(item[0]) is str and type(item[1]) is str):
            raise damaged(label, name, f"history item {index} is not a [role, content] pair of strings")
        role, content = item
        if role != ("user" if user else "assistant"):
            expected = Role.USER if user else Role.ASSISTANT
            raise damaged(label, name, f"history item {index} is {role!r} where {expected} was due")
        if escapes and ("\x00" in content or _has_surrogate(content)):
            raise damaged(label, name, f"history item {index} holds a character no store keeps")
        messages.append(Message(Role.USER if user else Role.ASSISTANT, content))
    if len(messages) % 2:
        raise damaged(label, name, f"history holds {len(messages)} messages, not whole pairs")
    return tuple(messages)


def _check_pairs(messages: tuple[Message, ...], version: int, label: str, name: str) -> None:
    if len(messages) // 2 > version:
        raise damaged(label, name, f"history holds {len(messages) // 2} pairs after only {version} commits")


class Histories:
    """One store's history codec: the checks of :func:`decode_history`, remembered for the few texts it last
    passed, and :func:`~.store.encode_history`, remembered for the few histories it last encoded.

    Why: with many clients on one session, every ``begin`` and every refused commit reads the row's history, and
    decoding and checking it in Python (JSON, then each item's shape, role and characters, then a message
    object each) cost a client about 20 us a read, on a machine whose CPUs those clients keep busy. Most reads
    find a text this store has just read (the version they began on, or the one that refused them). The checks
    of the text are a function of the text alone, so a text equal to one already passed passes again, giving the
    same messages: that part is remembered, by the exact text, never by time or version; what depends on the
    version (no more pairs than commits) is checked on every read. A text never seen, a hand-damaged row
    included, is decoded and checked in full, and a text that fails is never remembered. One per store object,
    so two workers never share one (each lesson worker has its own store), and at most :attr:`KEPT` texts.
    """

    KEPT = 16

    __slots__ = ("_decoded", "_encoded")

    def __init__(self) -> None:
        self._decoded: dict[str, tuple[Message, ...]] = {}
        self._encoded: dict[int, tuple[tuple[Message, ...], str]] = {}

    def decode(self, text: object, version: int, label: str, name: str) -> tuple[Message, ...]:
        """:func:`decode_history` of ``text``."""
        messages = self._decoded.get(text) if type(text) is str else None
        if messages is None:
            messages = _messages(text, label, name)
            if len(self._decoded) >= self.KEPT:
                self._decoded.clear()
            self._decoded[text] = messages  # type: ignore[index]  # a str: _messages refused anything else
        _check_pairs(messages, version, label, name)
        return messages

    def encode(self, history: tuple[Message, ...]) -> str:
        """:func:`~.store.encode_history` of ``history`` (remembered by the tuple's identity: a ticket's history
        is the very tuple a read decoded, and every commit of a ticket built on it sends it as its base)."""
        kept = self._encoded.get(id(history))
        if kept is not None and kept[0] is history:
            return kept[1]
        encoded = encode_history(history)
        if len(self._encoded) >= self.KEPT:
            self._encoded.clear()
        self._encoded[id(history)] = (history, encoded)  # the tuple kept alive: its id cannot be reused
        return encoded

    def row_state(self, row: Sequence[Any] | None, label: str, name: str) -> RowState:
        """:func:`row_state`, with this codec."""
        if row is None:
            return row_state(row, label, name)
        version = checked_version(row[0], label, name)
        check_sequence(version, row[4], label, name)
        history = self.decode(row[1], version, label, name)
        return RowState(version, history, receipt_of(row[2], row[3], label, name))


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
