"""The store contract: what every store offers a versioned session, and what the stores share.

:class:`Store` is the protocol SQLite and PostgreSQL both meet, one database transaction a method; :func:`open_store`
reads the store a command line names. The package's docstring (:mod:`lab.sessions.stores`) tells the whole design.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from lab.errors import LabError, Unavailable
from lab.messages import Message

SCHEMA_VERSION = 1
"""The version of the tables below. Bump it (and migrate) whenever a table changes."""

POSTGRES_URL_VARIABLE = "LAB_POSTGRES_URL"
"""The environment variable naming a PostgreSQL server the lessons may use (``postgresql://...``)."""


class StoreError(LabError):
    """A store cannot do what was asked: a database it cannot open, a schema it does not know, a missing driver."""


@dataclass(frozen=True, slots=True)
class RowState:
    """One snapshot of a session's row: its version, its history, and the receipt of the request id asked about
    (``(question, answer)``, or ``None`` when the session has no receipt for it)."""

    version: int
    history: tuple[Message, ...]
    receipt: tuple[str, str] | None = None


class Store(Protocol):
    """What a durable store offers a session: each method is one database transaction (:mod:`lab.sessions.stores`)."""

    @property
    def label(self) -> str:
        """``sqlite:NAME`` or ``postgresql://host:port/db``: what the explorer, the console and evidence call it."""
        ...

    def open_session(self, name: str) -> str:
        """The key of the session called ``name``, creating its row (version 0, no history) on first use."""
        ...

    def read(self, key: str, name: str, request_id: str | None = None) -> RowState:
        """The row's version and history, and the receipt of ``request_id``, in one snapshot."""
        ...

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
        """The compare-and-set commit; False (nothing written) when the version moved or the request id has a
        receipt."""
        ...

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
        """Write version and history with no compare-and-set: the lost-update mistake, kept for a mutant."""
        ...

    def receipt_ids(self, key: str, name: str) -> tuple[str, ...]:
        """The request ids the session still remembers, oldest first."""
        ...

    def drop_session(self, name: str) -> None:
        """Delete the session called ``name`` and its receipts (a fresh row next time, with a new key)."""
        ...

    def close(self) -> None:
        """Close the connection; the data stays in the database."""
        ...


@dataclass(frozen=True, slots=True)
class Decided:
    """What a one-step commit decided: ``committed``, or else the version and the request id's receipt (as
    :class:`RowState` has them, checked like a read) that its refusal saw."""

    committed: bool
    version: int
    receipt: tuple[str, str] | None = None


@runtime_checkable
class OneStepStore(Store, Protocol):
    """A store that also decides a whole commit in one round trip (PostgreSQL): the session sends the ticket and
    the store reads, decides and writes or refuses in one statement, with no read before it."""

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
        """Commit ``history`` if the row is still at ``version`` holding ``base`` and the request id has no
        receipt; else write nothing and say what the refusal saw. ``None`` when the store cannot decide in one
        step just now: the session then reads and decides itself."""
        ...


def access_name(label: str) -> str:
    """What :func:`~lab.hooks.note_shared_access` calls a store's database: ``db sqlite:lesson.db``."""
    return f"db {label}"


def row_name(session: str) -> str:
    """What the explorer calls one session's row: ``session:s1``."""
    return f"session:{session}"


def encode_history(history: Sequence[Message]) -> str:
    """The history column: a JSON list of ``[role, content]`` pairs, in order (what
    ``json.dumps(..., ensure_ascii=False, separators=(",", ":"))`` writes, by one encoder made once: ``dumps``
    builds a new encoder on every call with these arguments. A role is a ``StrEnum``, which JSON writes as its
    string)."""
    return _ENCODER.encode([[m.role, m.content] for m in history])


_ENCODER = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"))


def open_store(spec: str) -> Store | None:
    """The store a command line names: ``memory`` (``None``: the session object holds the state),
    ``sqlite:PATH``, or a ``postgresql://`` URL, each with its settings after ``?``
    (``sqlite:chat.db?synchronous=full``, ``postgresql://...?lock_timeout=2``; :mod:`lab.sessions.stores.options`).
    Anything else is a :class:`StoreError` in one line."""
    if spec == "memory":
        return None
    if spec.startswith("sqlite:"):
        from lab.sessions.stores.sqlite import SqliteStore

        return SqliteStore.from_spec(spec.removeprefix("sqlite:"))
    if spec.startswith(("postgresql://", "postgres://")):
        from lab.sessions.stores.postgres import PostgresStore

        return PostgresStore(spec)
    raise StoreError(f"unknown store {spec!r}: use memory, sqlite:PATH or postgresql://USER@HOST:PORT/DB")


def store_label(store: Store | None) -> str:
    """``memory`` for no store, otherwise the store's label."""
    return "memory" if store is None else store.label


# -- lessons' servers ------------------------------------------------------------------------------------------

NO_POSTGRES = (
    f"no PostgreSQL server: set {POSTGRES_URL_VARIABLE}, or run under "
    "`python -m lab.sessions.stores.pgserver -- ...`, which starts a throwaway one"
)
"""Why a PostgreSQL lesson is skipped when no server is configured."""


def lesson_postgres_url() -> str:
    """The PostgreSQL server lessons use (``$LAB_POSTGRES_URL``).

    Without one, :class:`~lab.errors.Unavailable`: called from a scenario's ``setup``, that records the scenario
    as SKIPPED with the reason (:data:`NO_POSTGRES`), so a machine without a server neither fails the lesson nor
    passes it, and the evidence says why it did not run.
    """
    url = os.environ.get(POSTGRES_URL_VARIABLE, "").strip()
    if not url:
        raise Unavailable(NO_POSTGRES)
    return url


def stores_used(holder: object) -> str:
    """Where the sessions ``holder`` keeps (a scenario) store their state: the label of each session's store, found
    among its attributes directly or in a list, tuple or dict, joined by ``, ``; ``memory`` when none is durable
    (then the session objects themselves are the state). The evidence records it for every scenario.

    Read without running any of the learner's code: the holder's own dict, the containers' own views, and
    :func:`_store_name` of each item (a learner's ``__getattr__`` raising KeyError must not crash the scenario)."""
    found: set[str] = set()
    attributes = _own_dict(holder)
    for value in list(dict.values(attributes)):
        kind = type(value)
        items = (
            list(dict.values(value))  # type: ignore[arg-type]
            if issubclass(kind, dict)
            else list(value)  # type: ignore[call-overload]
            if kind is list or kind is tuple
            else [value]
        )
        found.update(name for item in items if isinstance(name := _store_name(item), str))
    return ", ".join(sorted(found - {"memory"})) or "memory"


def _own_dict(obj: object) -> dict[str, object]:
    """``obj``'s instance dict, read without running its code (empty when it has none)."""
    try:
        attributes = object.__getattribute__(obj, "__dict__")
    except AttributeError:
        return {}
    return attributes if type(attributes) is dict else {}


def _store_name(item: object) -> object:
    """``item.store_name`` found statically: a string in the item's own dict or its class's, or the lab's own
    ``store_name`` property (the versioned session's, which reads only the lab's store); ``None`` for anything
    else. No ``__getattr__``, ``__getattribute__`` or descriptor of the learner's runs."""
    own = _own_dict(item).get("store_name")
    if own is not None:
        return own
    for klass in type(item).__mro__:
        attribute = klass.__dict__.get("store_name")
        if attribute is None:
            continue
        if isinstance(attribute, property):
            getter = attribute.fget
            if getter is not None and str(getattr(getter, "__module__", "")).startswith("lab.sessions"):
                try:
                    return getter(item)
                except Exception:  # a learner's subclass that broke the lab's property: no name, not a crash
                    return None
            return None
        return attribute
    return None
