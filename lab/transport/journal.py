"""The scripted provider's own record: what it received, what it generated and billed, what it finished.

A client that timed out or cancelled knows only that it stopped waiting. The provider knows more: whether the
request arrived, how far generation went (what it bills, chunk by chunk), and whether it finished an answer the
client never read. Article 000 says a read timeout "cannot prove the service did not process or bill the request";
this journal is that other side, kept by the scripted double so a lesson can check the whole story: a reconciled
answer is never lost and never billed twice.

It is plain data guarded by the transport's own lock; nothing in it depends on the wall clock.
"""

from __future__ import annotations

from dataclasses import dataclass

from lab.transport.contract import Reply


@dataclass
class Entry:
    """What the provider did with one request id.

    ``sends`` counts how many requests arrived with this id (a retry would be a second, billed one);
    ``chunks_billed`` how many chunks it generated (what a token bill would count); ``finished`` the reply it
    completed, whether or not the client read it; ``abandoned`` why the client stopped reading (``None`` if it
    read to the end).
    """

    request_id: str
    sends: int = 0
    chunks_billed: int = 0
    finished: Reply | None = None
    abandoned: str | None = None


class Journal:
    """Entries by request id, in the order requests arrived; a request sent without an id is ``call-N``."""

    def __init__(self) -> None:
        self._entries: dict[str, Entry] = {}
        self.lookups: list[str] = []

    def received(self, request_id: str) -> Entry:
        """A request arrived with ``request_id``: its entry, with one more send."""
        entry = self._entries.setdefault(request_id, Entry(request_id))
        entry.sends += 1
        return entry

    def lookup(self, request_id: str) -> Reply | None:
        """The reply the provider finished for ``request_id``, or ``None``; the lookup itself bills nothing."""
        self.lookups.append(request_id)
        entry = self._entries.get(request_id)
        return None if entry is None else entry.finished

    def __getitem__(self, request_id: str) -> Entry:
        return self._entries[request_id]

    def __contains__(self, request_id: object) -> bool:
        return request_id in self._entries

    @property
    def entries(self) -> tuple[Entry, ...]:
        """Every entry, in arrival order."""
        return tuple(self._entries.values())

    @property
    def chunks_billed(self) -> int:
        """Every chunk generated, for every request: the provider's bill."""
        return sum(entry.chunks_billed for entry in self._entries.values())
