# size: article 003's session whole: tickets, receipts and both state paths (memory, store) it guards
"""VersionedSession: article 003's session, where the network call happens outside the lock.

``begin()`` hands out an immutable :class:`Ticket` (the version and history the answer will be built on);
the caller talks to the model without holding anything; ``commit()`` then checks and updates the whole state in one
critical section. An answer built on an old version comes back STALE instead of being spliced onto a history it
never saw.

``commit`` decides in this order, first match wins (the order of the articles' reference implementation: the
ticket's owner, then the reply, then receipts, then the version):

=====  ========================================================  ============  ==============================
Order  Condition                                                 Status        State change
=====  ========================================================  ============  ==============================
1      the ticket was not issued by this session object's        FOREIGN       none
       ``begin``: another session's (even with an equal id),
       or one built by hand or by ``dataclasses.replace``
2      blank answer, or ``finish_reason != "stop"``              INVALID       none
3      the request id has a receipt with the same question       DUPLICATE     none
       and answer
3      the request id has a receipt with a different question    ID_CONFLICT   none
       or answer
4      ``ticket.version != session.version``                     STALE         none
5      otherwise                                                 COMMITTED     pair appended, oldest whole
                                                                                pairs beyond ``max_rounds``
                                                                                dropped, ``version += 1``,
                                                                                receipt stored (oldest evicted
                                                                                beyond ``receipt_capacity``)
=====  ========================================================  ============  ==============================

Because receipts are checked before the version, re-committing a ticket that already succeeded says DUPLICATE,
not a vague STALE. With the default memory store this is in-process idempotency only: receipts live in memory, a
bounded number of them, so an evicted receipt or a restarted process forgets the request id, and a retry then looks
like any other old ticket (STALE). It does not stop the model service from receiving a request twice.

**Where the state lives.** Without ``store=`` the session object itself holds version, history and receipts (the
*memory* store, article 003's session as it was). With a durable store (:mod:`lab.sessions.stores`: SQLite or
PostgreSQL) the session's fields are only its view of a database row: ``begin``, ``commit`` and ``snapshot`` read
the row first (one statement, one snapshot), the table below is decided on that snapshot, and the write is a
compare-and-set on the version that was read. If another process committed in between, the write changes
nothing and the session reads again and decides again -- STALE, or DUPLICATE when the other commit was the same
request. PostgreSQL's commit skips the read: the ticket goes to the server, which decides and writes or refuses
in one statement, and the table runs on the row that statement saw. The lock then only orders this process's own
threads; the database orders everyone.

Ownership is decided by identity, not by name. Each in-memory session object has a private identity; ``begin``
stamps it on the ticket it returns and ``commit`` compares it with ``is``. Two sessions that happen to share a
``session_id`` are still two states, and a ticket of one must not advance the other (article 003: "a ticket created
by another session is refused; one session's version number cannot update another"). The stamp is kept outside the
dataclass fields, so it never shows in ``repr``, ``==``, ``asdict`` or anything serialized, and no result depends on
an address. A durable session's identity is its row's random key, created with the row: every session object over
that row (in any process, after any restart) accepts its tickets, a session of the same name in another database
refuses them, and a pickled ticket carries the key so that another worker process can commit it.

**A reply in flight, or given up on.** ``is_current(ticket)`` says, while a slow reply still streams, whether it
could still commit (early STALE: a caller may stop a stream that will be refused and pay for fewer tokens).
``reconcile(ticket, transport)``, after a timeout or a cancel, asks the provider's record by the request id and puts
a finished answer through ``commit`` (COMMITTED, STALE, DUPLICATE, INVALID); with nothing finished or nothing to
ask it is UNKNOWN, and it never sends a second request.

Arguments of the wrong type are the caller's mistake and raise :class:`~lab.errors.ArgumentTypeError` naming the
parameter, before any probe point. What the *model* may legitimately send back is answered with a status instead:
a ``None`` answer (null content) or a ``None`` finish reason (omitted) is INVALID, like a blank answer.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from contextlib import AbstractContextManager
from dataclasses import dataclass
from enum import StrEnum

from lab.errors import ArgumentTypeError, UsageError
from lab.hooks import Probe, no_probe
from lab.messages import DEFAULT_MODEL, DEFAULT_SYSTEM_PROMPT, ChatRequest, Message, Role, chat_request
from lab.sessions.stores import OneStepStore, RowState, Store, check_text, kept_by_every_store, store_label
from lab.transport.contract import Reconcilable, TransportFailure
from lab.transport.streaming import streaming_request

DEFAULT_MAX_ROUNDS = 2
DEFAULT_RECEIPT_CAPACITY = 64


class CommitStatus(StrEnum):
    """How one ``commit`` ended. Only COMMITTED changes the session."""

    COMMITTED = "COMMITTED"
    STALE = "STALE"
    DUPLICATE = "DUPLICATE"
    ID_CONFLICT = "ID_CONFLICT"
    INVALID = "INVALID"
    FOREIGN = "FOREIGN"
    UNKNOWN = "UNKNOWN"
    """``reconcile`` only: the provider's record has no finished answer for the request (or there is no record to
    ask). Nothing changed, and the request's fate stays unknown: it may still have been processed and billed."""


class _Identity:
    """One session object's identity. Tickets carry it and ``commit`` compares it with ``is``, never with ``==``.

    It keeps the session id only so that a debugger shows something readable instead of an address; two identities
    are never equal, whatever their ids.
    """

    __slots__ = ("_session_id",)

    def __init__(self, session_id: str) -> None:
        self._session_id = session_id

    def __repr__(self) -> str:
        return f"<identity of session {self._session_id}>"


class _DurableIdentity:
    """A durable session's identity: the random key of its row. Equal keys are one session, in any process."""

    __slots__ = ("key",)

    def __init__(self, key: str) -> None:
        self.key = key

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _DurableIdentity) and other.key == self.key

    def __hash__(self) -> int:
        return hash(self.key)

    def __repr__(self) -> str:
        return "<identity of a durable session>"  # the key is a capability: it stays out of reprs


def _same_owner(issuer: _Identity | _DurableIdentity | None, owner: _Identity | _DurableIdentity) -> bool:
    """In memory, the very identity object; durable, an equal row key."""
    if isinstance(owner, _DurableIdentity):
        return owner == issuer
    return issuer is owner


class _Stamped:
    """The slot where ``begin`` stamps the issuing session's identity on a ticket.

    A base class rather than a dataclass field, on purpose: ``fields()``, ``asdict()``, ``repr``, ``==``, ``hash``
    and pickling never see it, and ``dataclasses.replace`` (which rebuilds through ``__init__``) returns a ticket
    without it. A ticket built by hand or by ``replace`` therefore carries no identity and is FOREIGN everywhere.
    """

    __slots__ = ("_issuer",)
    _issuer: _Identity | _DurableIdentity


@dataclass(frozen=True, slots=True)
class Ticket(_Stamped):
    """What ``begin`` hands out: the state an answer will be built on. Immutable, history included.

    ``session_id`` is there to be read by people (notes, reprs); it does not decide ownership. Only the very object
    ``begin`` returned is accepted by its session: equality compares what a ticket says, not who issued it, so an
    equal ticket built by hand is still FOREIGN. Copies are the ticket itself, as for any immutable value.
    """

    session_id: str
    version: int
    request_id: str
    question: str
    history: tuple[Message, ...]

    def to_request(
        self, *, model: str = DEFAULT_MODEL, system_prompt: str = DEFAULT_SYSTEM_PROMPT, stream: bool = False
    ) -> ChatRequest:
        """The chat request to send for this ticket: system prompt, the snapshot's pairs, then the question
        (``stream=True``: the same request asking for a streamed reply)."""
        request = chat_request(
            [*self.history, Message(Role.USER, self.question)], model=model, system_prompt=system_prompt
        )
        return streaming_request(request) if stream else request

    def __copy__(self) -> Ticket:
        return self

    def __deepcopy__(self, memo: dict[int, object]) -> Ticket:
        return self

    def __reduce__(self) -> tuple[object, ...]:
        """Pickled, a ticket keeps its fields and, when a durable session issued it, that session's row key: the
        one owner that means the same thing in another process. An in-memory owner is an object of this process
        and is left behind (the unpickled ticket is FOREIGN everywhere)."""
        issuer = _issuer_of(self)
        key = issuer.key if isinstance(issuer, _DurableIdentity) else None
        return (_rebuild_ticket, (self.session_id, self.version, self.request_id, self.question, self.history, key))

    def __repr__(self) -> str:
        return f"<Ticket {self.request_id} of {self.session_id} v{self.version}, {len(self.history) // 2} pairs>"


def _issuer_of(ticket: Ticket) -> _Identity | _DurableIdentity | None:
    """The identity stamped on ``ticket`` by ``begin``, or None for a ticket built any other way."""
    return getattr(ticket, "_issuer", None)


def _rebuild_ticket(
    session_id: str, version: int, request_id: str, question: str, history: tuple[Message, ...], key: str | None
) -> Ticket:
    """Unpickling: the fields, and a durable owner's key if the ticket had one."""
    ticket = Ticket(session_id, version, request_id, question, history)
    if key is not None:
        object.__setattr__(ticket, "_issuer", _DurableIdentity(key))
    return ticket


@dataclass(frozen=True, slots=True)
class Receipt:
    """What the session remembers of a committed request id: its question and answer, to tell a duplicate from a
    conflict."""

    question: str
    answer: str


class VersionedSession:
    """A chat session with a version number, so that a commit built on an old version can be refused.

    >>> session = VersionedSession("s1")
    >>> slow, fast = session.begin("r-slow", "Q1"), session.begin("r-fast", "Q2")
    >>> session.commit(fast, "A2", "stop"), session.commit(slow, "A1", "stop")
    (<CommitStatus.COMMITTED: 'COMMITTED'>, <CommitStatus.STALE: 'STALE'>)
    """

    def __init__(
        self,
        session_id: str,
        *,
        max_rounds: int = DEFAULT_MAX_ROUNDS,
        receipt_capacity: int = DEFAULT_RECEIPT_CAPACITY,
        lock: AbstractContextManager[object] | None = None,
        probe: Probe = no_probe,
        store: Store | None = None,
    ) -> None:
        if not isinstance(session_id, str):
            raise ArgumentTypeError.naming("VersionedSession()", "session_id", "a str", session_id)
        if not session_id.strip():
            raise UsageError("a session needs a non-blank session_id")
        if max_rounds < 0 or receipt_capacity < 0:
            raise UsageError("max_rounds and receipt_capacity must be >= 0")
        check_text(store_label(store), "session name", session_id)  # the same inputs on every store
        self.session_id = session_id
        self.max_rounds = max_rounds
        self.receipt_capacity = receipt_capacity
        self._lock: AbstractContextManager[object] = lock if lock is not None else threading.Lock()
        self._probe = probe
        self._store = store
        self._identity: _Identity | _DurableIdentity
        self._key = ""
        if store is None:
            self._identity = _Identity(session_id)
        else:
            self._key = store.open_session(session_id)  # the row, created with a fresh random key on first use
            self._identity = _DurableIdentity(self._key)
        self._version = 0
        self._history: tuple[Message, ...] = ()
        self._receipts: OrderedDict[str, Receipt] = OrderedDict()
        # a store deciding in one round trip gets the ticket, unless a subclass writes its own way (a mutant)
        writes_its_own_way = type(self)._apply is not VersionedSession._apply
        self._deciding = store if isinstance(store, OneStepStore) and not writes_its_own_way else None

    @property
    def store_name(self) -> str:
        """Where the state lives: ``memory``, ``sqlite:...`` or ``postgresql://...``."""
        return store_label(self._store)

    @property
    def version(self) -> int:
        """The number of commits so far (durable: as the database says now)."""
        if self._store is not None:
            return self._store.read(self._key, self.session_id).version
        return self._version

    @property
    def receipt_ids(self) -> tuple[str, ...]:
        """The request ids this session still remembers, oldest first."""
        if self._store is not None:
            return self._store.receipt_ids(self._key, self.session_id)
        return tuple(self._receipts)

    def snapshot(self) -> tuple[int, tuple[Message, ...]]:
        """A consistent ``(version, history)`` pair, read in one critical section (durable: one statement)."""
        with self._lock:
            self._load(None)
            return self._version, self._history

    def begin(self, request_id: str, question: str) -> Ticket:
        """Hand out a ticket holding the current version and an immutable snapshot of the history."""
        self._check_begin(request_id, question)
        self._check_storable(("request id", request_id), ("question", question))
        self._probe("begin:enter")
        with self._lock:
            self._load(None)
            return self._issue(request_id, question, self._history)

    def commit(self, ticket: Ticket, answer: str | None, finish_reason: str | None) -> CommitStatus:
        """Check the ticket and the reply and, if all holds, append the pair, all in one critical section.

        Durable: the checks run on a snapshot of the row and the write is a compare-and-set on its version; when
        another process committed in between, nothing was written and the checks run again on a new snapshot.
        """
        self._check_commit(ticket, answer, finish_reason)
        self._probe("commit:enter")
        with self._lock:
            decided = self._commit_in_one_step(ticket, answer, finish_reason)
            if decided is not None:
                return decided
            while True:
                self._load(ticket.request_id)
                refused = (
                    self._refuse_foreign(ticket)
                    or self._refuse_invalid(answer, finish_reason)
                    or self._refuse_by_receipt(ticket, answer)
                    or self._refuse_stale(ticket)
                )
                if refused is not None:
                    return refused
                self._probe("commit:checked")
                if self._apply(ticket, str(answer)):
                    return CommitStatus.COMMITTED
                # Durable only: another process committed between our read and our write. Read and decide again,
                # in a step of its own: a third commit may come in between here too.
                self._probe("commit:raced")

    def _commit_in_one_step(self, ticket: Ticket, answer: str | None, finish_reason: str | None) -> CommitStatus | None:
        """On a store that decides in one round trip (PostgreSQL): the same table, with no read first. FOREIGN
        and INVALID need no row; the store commits only if the row still is the ticket's version and history (so
        the new history extends what the row holds), and otherwise returns the row its decision saw, on which the
        rest of the table runs here. ``None`` when that row refuses nothing (another commit got in between) or the
        store did not decide: the commit then reads, decides and writes the ordinary way."""
        store = self._deciding
        if store is None:
            return None
        refused = self._refuse_foreign(ticket) or self._refuse_invalid(answer, finish_reason)
        if refused is not None or not kept_by_every_store(str(answer)):  # such an answer: refused if it would write
            return refused
        self._version, self._history = ticket.version, ticket.history  # the view the write is built on
        history = self._extended(ticket, str(answer))
        self._probe("commit:write")
        decided = store.commit_ticket(
            self._key,
            self.session_id,
            version=ticket.version,
            base=ticket.history,
            history=history,
            request_id=ticket.request_id,
            question=ticket.question,
            answer=str(answer),
            receipt_capacity=self.receipt_capacity,
        )
        if decided is None:
            return None
        if decided.committed:
            self._remember(ticket, str(answer), history)
            return CommitStatus.COMMITTED
        self._version, self._receipts = decided.version, OrderedDict()  # what the refusal saw
        if decided.receipt is not None:
            self._receipts[ticket.request_id] = Receipt(*decided.receipt)
        return self._refuse_by_receipt(ticket, answer) or self._refuse_stale(ticket)

    def is_current(self, ticket: Ticket) -> bool:
        """True while ``ticket``'s version is still the session's: an answer built on it could still commit.

        Early STALE: asked while a slow reply streams, ``False`` means that reply will be refused whatever it says,
        so the caller may stop it now and pay for fewer tokens. It reads the version under the lock (durable: the
        row), and a ``True`` is a hint, not a promise: another commit may land before this one.
        """
        self._check_commit(ticket, None, None)
        with self._lock:
            self._load(None)
            return ticket.version == self._version

    def reconcile(self, ticket: Ticket, provider: Reconcilable) -> CommitStatus:
        """After a timeout or a cancel: ask the provider's record what became of ``ticket``'s request, and commit
        what it finished through the ordinary :meth:`commit` (COMMITTED, STALE, DUPLICATE, ...).

        No second request is sent: a lookup generates nothing and bills nothing. When the provider has no finished
        answer, or offers no record to ask, or the lookup itself fails, the answer is UNKNOWN and nothing changes.
        """
        self._check_commit(ticket, None, None)
        self._probe("reconcile:enter")
        if not provider.can_reconcile:
            return CommitStatus.UNKNOWN
        try:
            record = provider.lookup(ticket.request_id)
        except TransportFailure:
            return CommitStatus.UNKNOWN
        if record is None:
            return CommitStatus.UNKNOWN
        return self.commit(ticket, record.content, record.finish_reason)

    @staticmethod
    def _check_begin(request_id: object, question: object) -> None:
        """Refuse arguments no request can be built from: the caller's mistake, so an error, not a status."""
        for name, value in (("request_id", request_id), ("question", question)):
            if not isinstance(value, str):
                raise ArgumentTypeError.naming("begin()", name, "a str", value)
            if not value.strip():
                raise UsageError(f"begin() needs a non-blank {name}")

    @staticmethod
    def _check_commit(ticket: object, answer: object, finish_reason: object) -> None:
        """Refuse arguments of the wrong type. ``None`` answer or finish reason is the model's doing: INVALID."""
        if not isinstance(ticket, Ticket):
            raise ArgumentTypeError.naming("commit()", "ticket", "the Ticket begin() returned", ticket)
        for name, value in (("answer", answer), ("finish_reason", finish_reason)):
            if value is not None and not isinstance(value, str):
                raise ArgumentTypeError.naming("commit()", name, "a str or None", value)

    def _check_storable(self, *texts: tuple[str, str]) -> None:
        """Refuse text no store keeps (a NUL character, a lone surrogate) with one :class:`StoreError` line, the
        same on every store, memory included: a session must not accept in memory what it could not keep once
        moved to SQLite or PostgreSQL (PostgreSQL cannot store a NUL in text). The request id and the question are
        checked at ``begin``, before the model is asked for an answer that could never be committed; the answer
        when a commit is about to write it, so a refused commit still answers with its status."""
        label = store_label(self._store)
        for what, value in texts:
            check_text(label, what, value)

    def _issue(self, request_id: str, question: str, history: tuple[Message, ...]) -> Ticket:
        """A ticket for the current version, stamped with this session's identity; the caller holds the lock."""
        ticket = Ticket(self.session_id, self._version, request_id, question, history)
        object.__setattr__(ticket, "_issuer", self._identity)  # past the frozen __setattr__, once, at issue
        return ticket

    # The checks of the precedence table, one each, so that a reader can match them to its rows (and the mutants
    # in lab.mutants can reorder them). The caller holds the lock.

    def _refuse_foreign(self, ticket: Ticket) -> CommitStatus | None:
        return None if _same_owner(_issuer_of(ticket), self._identity) else CommitStatus.FOREIGN

    def _refuse_invalid(self, answer: str | None, finish_reason: str | None) -> CommitStatus | None:
        valid = answer is not None and answer.strip() != "" and finish_reason == "stop"
        return None if valid else CommitStatus.INVALID

    def _refuse_by_receipt(self, ticket: Ticket, answer: str | None) -> CommitStatus | None:
        receipt = self._receipts.get(ticket.request_id)
        if receipt is None:
            return None
        return CommitStatus.DUPLICATE if receipt == Receipt(ticket.question, str(answer)) else CommitStatus.ID_CONFLICT

    def _refuse_stale(self, ticket: Ticket) -> CommitStatus | None:
        return CommitStatus.STALE if ticket.version != self._version else None

    def _apply(self, ticket: Ticket, answer: str) -> bool:
        """The write half of a commit; the caller holds the lock and has checked everything.

        True once written. Durable, False when the compare-and-set found the version moved (nothing written)."""
        self._check_storable(("answer", answer))
        history = self._extended(ticket, answer)
        self._probe("commit:write")
        if self._store is not None and not self._store.commit_round(
            self._key,
            self.session_id,
            expected_version=self._version,
            history=history,
            request_id=ticket.request_id,
            question=ticket.question,
            answer=answer,
            receipt_capacity=self.receipt_capacity,
        ):
            return False
        self._remember(ticket, answer, history)
        return True

    def _extended(self, ticket: Ticket, answer: str) -> tuple[Message, ...]:
        """The history with the new pair appended and the oldest whole pairs beyond ``max_rounds`` dropped."""
        history = [*self._history, Message(Role.USER, ticket.question), Message(Role.ASSISTANT, answer)]
        while len(history) > 2 * self.max_rounds:
            del history[0:2]
        return tuple(history)

    def _remember(self, ticket: Ticket, answer: str, history: tuple[Message, ...]) -> None:
        """Record a written commit in this object's fields (in memory, the state itself)."""
        self._history = history
        self._version += 1
        self._receipts[ticket.request_id] = Receipt(ticket.question, answer)
        while len(self._receipts) > self.receipt_capacity:
            self._receipts.popitem(last=False)

    def _load(self, request_id: str | None) -> None:
        """Durable: refresh this object's view (version, history, the receipt of ``request_id``) from the row, in
        one statement. In memory the fields are the state, and there is nothing to read."""
        if self._store is None:
            return
        row: RowState = self._store.read(self._key, self.session_id, request_id)
        self._version = row.version
        self._history = row.history
        self._receipts = OrderedDict()
        if request_id is not None and row.receipt is not None:
            self._receipts[request_id] = Receipt(*row.receipt)

    def __repr__(self) -> str:
        where = "" if self._store is None else f" in {self._store.label}"
        return f"<VersionedSession {self.session_id}{where} v{self._version}, {len(self._history) // 2} pairs>"
