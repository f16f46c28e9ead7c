"""Deliberately broken session variants, kept for teaching: each is a mistake a careful reader might make.

A mutant scenario passes when it *demonstrates* its bug deterministically; the correct sessions in
:mod:`lab.sessions` must never show the same symptom. Every mutant says in its docstring what it gets wrong.
"""

from __future__ import annotations

from lab.sessions.versioned import CommitStatus, Ticket, VersionedSession


class CheckOutsideLockSession(VersionedSession):
    """MUTANT: checks the version *before* taking the lock, then writes under it.

    Article 003 warns: "if the version check is moved outside the lock, two threads can both pass it and then
    overwrite each other". Two tickets for version 0 can both pass the check; both then append their pair, and the
    history splices two answers that were each built on the same old snapshot.
    """

    def commit(self, ticket: Ticket, answer: str | None, finish_reason: str | None) -> CommitStatus:
        """Check, then (too late) lock and write."""
        self._probe("commit:enter")
        if ticket.session_id != self.session_id:
            return CommitStatus.FOREIGN
        if answer is None or not answer.strip() or finish_reason != "stop":
            return CommitStatus.INVALID
        if ticket.version != self.version:  # the bug: nothing stops another commit between here and the write
            return CommitStatus.STALE
        self._probe("commit:checked")
        with self._lock:
            self._apply(ticket, answer)
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
                self._history = self._history[-self.max_messages:]  # the bug: a message is not a round
        return status

