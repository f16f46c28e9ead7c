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
not a vague STALE. This is in-process idempotency only: receipts live in memory, a bounded number of them, so an
evicted receipt or a restarted process forgets the request id, and a retry then looks like any other old ticket
(STALE). It does not stop the model service from receiving a request twice.

Ownership is decided by identity, not by name. Each session object has a private identity; ``begin`` stamps it on
the ticket it returns and ``commit`` compares it with ``is``. Two sessions that happen to share a ``session_id`` are
still two states, and a ticket of one must not advance the other (article 003: "a ticket created by another session
is refused; one session's version number cannot update another"). The stamp is kept outside the dataclass fields,
so it never shows in ``repr``, ``==``, ``asdict`` or anything serialized, and no result depends on an address.

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
from lab.messages import DEFAULT_MODEL, DEFAULT_SYSTEM_PROMPT, ChatRequest, Message, Role, chat_request
from lab.sessions.probes import Probe, no_probe

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


class _Stamped:
    """The slot where ``begin`` stamps the issuing session's identity on a ticket.

    A base class rather than a dataclass field, on purpose: ``fields()``, ``asdict()``, ``repr``, ``==``, ``hash``
    and pickling never see it, and ``dataclasses.replace`` (which rebuilds through ``__init__``) returns a ticket
    without it. A ticket built by hand or by ``replace`` therefore carries no identity and is FOREIGN everywhere.
    """

    __slots__ = ("_issuer",)
    _issuer: _Identity


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

    def to_request(self, *, model: str = DEFAULT_MODEL, system_prompt: str = DEFAULT_SYSTEM_PROMPT) -> ChatRequest:
        """The chat request to send for this ticket: system prompt, the snapshot's pairs, then the question."""
        return chat_request(
            [*self.history, Message(Role.USER, self.question)], model=model, system_prompt=system_prompt
        )

    def __copy__(self) -> Ticket:
        return self

    def __deepcopy__(self, memo: dict[int, object]) -> Ticket:
        return self

    def __repr__(self) -> str:
        return f"<Ticket {self.request_id} of {self.session_id} v{self.version}, {len(self.history) // 2} pairs>"


def _issuer_of(ticket: Ticket) -> _Identity | None:
    """The identity stamped on ``ticket`` by ``begin``, or None for a ticket built any other way."""
    return getattr(ticket, "_issuer", None)


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
    ) -> None:
        if not isinstance(session_id, str):
            raise ArgumentTypeError.naming("VersionedSession()", "session_id", "a str", session_id)
        if not session_id.strip():
            raise UsageError("a session needs a non-blank session_id")
        if max_rounds < 0 or receipt_capacity < 0:
            raise UsageError("max_rounds and receipt_capacity must be >= 0")
        self.session_id = session_id
        self.max_rounds = max_rounds
        self.receipt_capacity = receipt_capacity
        self._lock: AbstractContextManager[object] = lock if lock is not None else threading.Lock()
        self._probe = probe
        self._identity = _Identity(session_id)
        self._version = 0
        self._history: tuple[Message, ...] = ()
        self._receipts: OrderedDict[str, Receipt] = OrderedDict()

    @property
    def version(self) -> int:
        """The number of commits so far."""
        return self._version

    @property
    def receipt_ids(self) -> tuple[str, ...]:
        """The request ids this session still remembers, oldest first."""
        return tuple(self._receipts)

    def snapshot(self) -> tuple[int, tuple[Message, ...]]:
        """A consistent ``(version, history)`` pair, read in one critical section."""
        with self._lock:
            return self._version, self._history

    def begin(self, request_id: str, question: str) -> Ticket:
        """Hand out a ticket holding the current version and an immutable snapshot of the history."""
        self._check_begin(request_id, question)
        self._probe("begin:enter")
        with self._lock:
            return self._issue(request_id, question, self._history)

    def commit(self, ticket: Ticket, answer: str | None, finish_reason: str | None) -> CommitStatus:
        """Check the ticket and the reply and, if all holds, append the pair, all in one critical section."""
        self._check_commit(ticket, answer, finish_reason)
        self._probe("commit:enter")
        with self._lock:
            refused = (
                self._refuse_foreign(ticket)
                or self._refuse_invalid(answer, finish_reason)
                or self._refuse_by_receipt(ticket, answer)
                or self._refuse_stale(ticket)
            )
            if refused is not None:
                return refused
            self._probe("commit:checked")
            self._apply(ticket, str(answer))
            return CommitStatus.COMMITTED

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

    def _issue(self, request_id: str, question: str, history: tuple[Message, ...]) -> Ticket:
        """A ticket for the current version, stamped with this session's identity; the caller holds the lock."""
        ticket = Ticket(self.session_id, self._version, request_id, question, history)
        object.__setattr__(ticket, "_issuer", self._identity)  # past the frozen __setattr__, once, at issue
        return ticket

    # The checks of the precedence table, one each, so that a reader can match them to its rows (and the mutants
    # in lab.mutants can reorder them). The caller holds the lock.

    def _refuse_foreign(self, ticket: Ticket) -> CommitStatus | None:
        return None if _issuer_of(ticket) is self._identity else CommitStatus.FOREIGN

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

    def _apply(self, ticket: Ticket, answer: str) -> None:
        """The write half of a commit; the caller holds the lock and has checked everything."""
        history = [*self._history, Message(Role.USER, ticket.question), Message(Role.ASSISTANT, answer)]
        while len(history) > 2 * self.max_rounds:
            del history[0:2]
        self._probe("commit:write")
        self._history = tuple(history)
        self._version += 1
        self._receipts[ticket.request_id] = Receipt(ticket.question, answer)
        while len(self._receipts) > self.receipt_capacity:
            self._receipts.popitem(last=False)

    def __repr__(self) -> str:
        return f"<VersionedSession {self.session_id} v{self._version}, {len(self._history) // 2} pairs>"
