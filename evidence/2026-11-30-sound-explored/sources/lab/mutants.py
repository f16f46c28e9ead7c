"""Deliberately broken session variants, kept for teaching: each is a mistake a careful reader might make.

A mutant scenario passes when it *demonstrates* its bug deterministically; the correct sessions in
:mod:`lab.sessions` must never show the same symptom. Every mutant says in its docstring what it gets wrong.
"""

from __future__ import annotations

from lab.messages import Message, Role
from lab.sessions.versioned import CommitStatus, Receipt, Ticket, VersionedSession


class CheckOutsideLockSession(VersionedSession):
    """MUTANT: checks the version *before* taking the lock, then writes under it.

    Article 003 warns: "if the version check is moved outside the lock, two threads can both pass it and then
    overwrite each other". Two tickets for version 0 can both pass the check; both then append their pair, and the
    history splices two answers that were each built on the same old snapshot.
    """

    def commit(self, ticket: Ticket, answer: str | None, finish_reason: str | None) -> CommitStatus:
        """Check, then (too late) lock and write."""
        self._check_commit(ticket, answer, finish_reason)
        self._probe("commit:enter")
        refused = (  # the bug: nothing stops another commit between these checks and the write
            self._refuse_foreign(ticket) or self._refuse_invalid(answer, finish_reason) or self._refuse_stale(ticket)
        )
        if refused is not None:
            return refused
        self._probe("commit:checked")
        with self._lock:
            self._apply(ticket, str(answer))
            return CommitStatus.COMMITTED


class TrimByMessageSession(VersionedSession):
    """MUTANT: trims the history by single messages instead of whole user/assistant pairs.

    It keeps the last ``max_messages`` messages. With an odd limit the oldest kept message is an assistant reply
    whose question was dropped: article 000's "wrong boundary", ``assistant1 -> user2 -> assistant2 -> user3``.
    """

    def __init__(self, session_id: str, *, max_messages: int = 3, **options: object) -> None:
        super().__init__(session_id, **options)  # type: ignore[arg-type]
        self.max_messages = max_messages

    def commit(self, ticket: Ticket, answer: str | None, finish_reason: str | None) -> CommitStatus:
        """Commit like the real session, then cut the history to the last ``max_messages`` messages."""
        status = super().commit(ticket, answer, finish_reason)
        if status is CommitStatus.COMMITTED:
            with self._lock:
                self._history = self._history[-self.max_messages :]  # the bug: a message is not a round
        return status


class ReceiptsAfterVersionSession(VersionedSession):
    """MUTANT: compares the version *before* looking up receipts.

    Article 003 checks receipts first "so that a ticket that already committed gets a clear DUPLICATE instead of a
    vague STALE". Swap the two checks and a retried delivery of a committed request comes back STALE, and the
    caller, told its answer is out of date, may ask the model again for an answer that is already in the history.
    """

    def commit(self, ticket: Ticket, answer: str | None, finish_reason: str | None) -> CommitStatus:
        """Validate, then version, then receipts (the wrong order)."""
        self._check_commit(ticket, answer, finish_reason)
        self._probe("commit:enter")
        with self._lock:
            refused = (
                self._refuse_foreign(ticket)
                or self._refuse_invalid(answer, finish_reason)
                or self._refuse_stale(ticket)  # the bug: a committed request's retry never reaches its receipt
                or self._refuse_by_receipt(ticket, answer)
            )
            if refused is not None:
                return refused
            self._probe("commit:checked")
            self._apply(ticket, str(answer))
            return CommitStatus.COMMITTED


class BumpBeforeValidationSession(VersionedSession):
    """MUTANT: bumps the version before it validates the reply.

    An empty or truncated reply is then INVALID *and* has moved the version, so a valid answer built on the same
    version, arriving next, is refused as STALE: a failure that commits nothing still makes everyone else stale.
    """

    def commit(self, ticket: Ticket, answer: str | None, finish_reason: str | None) -> CommitStatus:
        """Claim the version first, validate afterwards (the wrong order)."""
        self._check_commit(ticket, answer, finish_reason)
        self._probe("commit:enter")
        with self._lock:
            foreign = self._refuse_foreign(ticket)
            if foreign is not None:
                return foreign
            claimed = ticket.request_id not in self._receipts and ticket.version == self._version
            if claimed:
                self._version += 1  # the bug: claimed before the reply is known to be valid
            refused = self._refuse_invalid(answer, finish_reason) or self._refuse_by_receipt(ticket, answer)
            if refused is not None:
                return refused
            if not claimed:
                return CommitStatus.STALE
            self._probe("commit:checked")
            self._version -= 1  # _apply bumps it again
            self._apply(ticket, str(answer))
            return CommitStatus.COMMITTED


class LiveHistoryTicketSession(VersionedSession):
    """MUTANT: hands out tickets that share the session's live history list instead of a snapshot.

    The history is a list appended to in place, and ``begin`` puts that very list in the ticket. An answer being
    built on a ticket then sees its "snapshot" change under it whenever someone else commits: article 003's
    "the old history in a ticket does not change with new commits" no longer holds.
    """

    def __init__(self, session_id: str, **options: object) -> None:
        super().__init__(session_id, **options)  # type: ignore[arg-type]
        self._live: list[Message] = []

    def begin(self, request_id: str, question: str) -> Ticket:
        """Hand out a ticket whose history *is* the live list (the bug)."""
        self._check_begin(request_id, question)
        self._probe("begin:enter")
        with self._lock:
            return self._issue(request_id, question, self._live)  # type: ignore[arg-type]

    def _apply(self, ticket: Ticket, answer: str) -> bool:
        self._live.extend([Message(Role.USER, ticket.question), Message(Role.ASSISTANT, answer)])
        while len(self._live) > 2 * self.max_rounds:
            del self._live[0:2]
        self._probe("commit:write")
        self._history = tuple(self._live)
        self._version += 1
        self._receipts[ticket.request_id] = Receipt(ticket.question, answer)
        return True


class UnlockedSession(VersionedSession):
    """MUTANT, with no probes and no lock: a learner's first draft of article 003's session.

    ``begin`` and ``commit`` check and write without taking any lock and without a single probe point. At the
    default granularity the explorer cannot put a switch between the version check and the write, so this
    mutant *survives* there; at line granularity every line is a scheduling point and the race is found: two
    commits both pass the check for the same version, and both write.
    """

    def begin(self, request_id: str, question: str) -> Ticket:
        """Read version and history with no lock."""
        self._check_begin(request_id, question)
        return self._issue(request_id, question, self._history)

    def commit(self, ticket: Ticket, answer: str | None, finish_reason: str | None) -> CommitStatus:
        """Check, then write, with nothing in between to stop another commit (the bug)."""
        self._check_commit(ticket, answer, finish_reason)
        if self._refuse_foreign(ticket) is not None:
            return CommitStatus.FOREIGN
        if answer is None or not answer.strip() or finish_reason != "stop":
            return CommitStatus.INVALID
        if ticket.request_id in self._receipts:
            return CommitStatus.DUPLICATE
        if ticket.version != self._version:
            return CommitStatus.STALE
        history = (*self._history, Message(Role.USER, ticket.question), Message(Role.ASSISTANT, answer))
        self._history = history[-2 * self.max_rounds :] if self.max_rounds else ()
        self._version = self._version + 1
        self._receipts[ticket.request_id] = Receipt(ticket.question, answer)
        return CommitStatus.COMMITTED


class InProcessLockSession(VersionedSession):
    """MUTANT: reads the version, checks it under its lock, then writes without compare-and-set.

    Each worker process has its own session object and its own lock, and a lock orders the threads of one process,
    nobody else's. Two workers both read version 0 from the database, both pass the version check, and both write
    ``version = 1`` and their own history: the second write replaces the first, both requests were told COMMITTED,
    and one answer is gone (a lost update). Article 003's check-then-write is safe only where one lock guards the
    state; across processes the check has to move into the write (``UPDATE ... WHERE version = ?``). On the memory
    store there is one process and one lock, and this session is the correct one.
    """

    def _apply(self, ticket: Ticket, answer: str) -> bool:
        """Write what was decided on the snapshot, whatever the row holds now (the bug)."""
        history = self._extended(ticket, answer)
        self._probe("commit:write")
        if self._store is not None:
            self._store.overwrite(
                self._key,
                self.session_id,
                version=self._version + 1,
                history=history,
                request_id=ticket.request_id,
                question=ticket.question,
                answer=answer,
                receipt_capacity=self.receipt_capacity,
            )
        self._remember(ticket, answer, history)
        return True


VERSIONED_VARIANTS: dict[str, type[VersionedSession]] = {
    "VersionedSession": VersionedSession,
    "CheckOutsideLockSession": CheckOutsideLockSession,
    "ReceiptsAfterVersionSession": ReceiptsAfterVersionSession,
    "BumpBeforeValidationSession": BumpBeforeValidationSession,
    "LiveHistoryTicketSession": LiveHistoryTicketSession,
    "TrimByMessageSession": TrimByMessageSession,
    "UnlockedSession": UnlockedSession,
}
"""The correct session first, then every mutant: what a race scenario over a versioned session is run against."""

DURABLE_VARIANTS: dict[str, type[VersionedSession]] = {
    "VersionedSession": VersionedSession,
    "InProcessLockSession": InProcessLockSession,
}
"""The variants a race between worker processes over a durable store is run against: compare-and-set, then the
in-process lock that protects nothing across processes."""
