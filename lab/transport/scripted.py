"""A transport that never touches the network: it answers from a script.

The double records every request body it receives (byte for byte what a real transport would send) and counts its
calls, so a test can prove "zero transport calls" or inspect what the byte budget let through. A step can be held
back until something opens (any object with a ``wait()`` method, typically a lab latch): that is how the lab says
"this reply is slow" without measuring time.

A :class:`Stream` step arrives in chunks, each one a probe point (``transport:chunk``), so under the lab's
scheduler every chunk is a place where another actor may run: races with a stream in flight are explored. A
:class:`Pause` in a stream waits for a latch, or for seconds on the run's virtual clock (``time.sleep`` inside an
actor moves that clock, no real time passes); the transport's ``deadline`` is measured on the same clock, so a
stalled stream times out deterministically. The double also plays the provider's side: its :class:`Journal`
records what each request id was billed and whether the provider finished it, and :meth:`ScriptedTransport.lookup`
reads that record (reconciliation) without sending anything.
"""

from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Protocol

from lab.errors import UsageError
from lab.hooks import Probe, no_probe
from lab.messages import ChatRequest
from lab.transport.contract import FailureKind, OnDelta, Reply, ShouldStop, TransportFailure
from lab.transport.journal import Entry, Journal
from lab.transport.streaming import DEFAULT_MAX_STREAM_BYTES, Candidate


class Waitable(Protocol):
    """Anything a held reply can wait on: a lab ``Latch`` or ``Event``, or a ``threading.Event``."""

    def wait(self) -> object: ...


@dataclass(frozen=True)
class Pause:
    """A gap in a stream: first ``until`` opens (if given), then ``seconds`` pass on the run's clock.

    A latch pause is the lesson saying *when* the next chunk comes; only the seconds count against a deadline.
    """

    seconds: float = 0.0
    until: Waitable | None = None


class StreamEnd(StrEnum):
    """How a scripted stream ends after its last chunk."""

    DONE = "done"
    """The provider's end marker: the stream ended (with the step's finish reason, which may be ``None``)."""
    CUT = "cut"
    """The connection closed with no end marker: the stream was cut, and a cut stream is ``IO``."""


@dataclass(frozen=True)
class Stream:
    """A scripted reply that arrives chunk by chunk: ``Stream(("Par", "is"))``.

    ``finish_reason`` is what the last event says (``"length"``, or ``None`` for none); ``end=StreamEnd.CUT`` closes the
    connection instead. ``finishes_if_abandoned`` says what the provider does when the client stops reading (a
    timeout, a cancel): stop generating and bill only what it sent (the default), or finish the answer anyway,
    bill it whole and keep it in its journal, where a later :meth:`ScriptedTransport.lookup` finds it.
    """

    chunks: tuple[str | Pause, ...]
    finish_reason: str | None = "stop"
    end: StreamEnd = StreamEnd.DONE
    finishes_if_abandoned: bool = False

    def __post_init__(self) -> None:
        object.__setattr__(self, "chunks", tuple(self.chunks))
        for chunk in self.chunks:
            if not isinstance(chunk, str | Pause):
                raise UsageError(f"a stream's chunks are text or Pause(...), not {type(chunk).__name__}")

    @property
    def text(self) -> str:
        """The whole answer the provider generates for this stream."""
        return "".join(chunk for chunk in self.chunks if isinstance(chunk, str))

    @property
    def pieces(self) -> int:
        """How many text chunks the stream has (what the provider bills when it generates them all)."""
        return sum(isinstance(chunk, str) for chunk in self.chunks)


@dataclass(frozen=True)
class Held:
    """A scripted step that is delivered only after ``until`` opens."""

    step: Reply | FailureKind | Stream
    until: Waitable


Step = Reply | FailureKind | Held | Stream


class ScriptedTransport:
    """Answers each ``send`` from a queue of steps, or by the question asked.

    >>> transport = ScriptedTransport([Reply("4"), FailureKind.TIMEOUT])
    >>> transport.send(ChatRequest("m")).content
    '4'
    >>> transport.calls
    1

    With ``by_question`` the answer depends on *which* question is asked, not on call order, so two actors racing
    for one transport get the same replies under every interleaving. ``deadline`` (seconds, settable after
    construction) bounds each whole call on the run's clock, across every pause of a stream.
    """

    def __init__(
        self,
        script: Iterable[Step] = (),
        *,
        by_question: Mapping[str, Step] | None = None,
        probe: Probe = no_probe,
        name: str = "transport",
        deadline: float | None = None,
        max_stream_bytes: int = DEFAULT_MAX_STREAM_BYTES,
    ) -> None:
        self.name = name
        self._queue: deque[Step] = deque(script)
        self._by_question = dict(by_question or {})
        self._probe = probe
        self._guard = threading.Lock()
        self.requests: list[bytes] = []
        self.deadline = deadline
        self.max_stream_bytes = max_stream_bytes
        self.journal = Journal()

    @property
    def calls(self) -> int:
        """How many times ``send`` or ``stream`` was called (lookups are not calls)."""
        return len(self.requests)

    @property
    def remaining(self) -> int:
        """How many queued steps are left."""
        return len(self._queue)

    @property
    def can_reconcile(self) -> bool:
        """Always: the scripted provider keeps a journal."""
        return True

    def send(self, request: ChatRequest, *, request_id: str | None = None) -> Reply:
        """Record the request, wait if the step is held, then return its reply or raise its failure."""
        return self._deliver(request, request_id, None, None)

    def stream(
        self,
        request: ChatRequest,
        *,
        on_delta: OnDelta | None = None,
        should_stop: ShouldStop | None = None,
        request_id: str | None = None,
    ) -> Reply:
        """Like ``send``, chunk by chunk: each chunk goes to ``on_delta``, then ``should_stop`` is asked."""
        return self._deliver(request, request_id, on_delta, should_stop)

    def lookup(self, request_id: str) -> Reply | None:
        """The provider's record of ``request_id``: the reply it finished, or ``None``. Sends nothing."""
        self._probe("transport:lookup")
        with self._guard:
            return self.journal.lookup(request_id)

    def _deliver(
        self, request: ChatRequest, request_id: str | None, on_delta: OnDelta | None, should_stop: ShouldStop | None
    ) -> Reply:
        self._probe("transport:send")
        ends = None if self.deadline is None else time.monotonic() + self.deadline
        step, entry = self._take(request, request_id)
        if isinstance(step, Held):
            step.until.wait()
            step = step.step
        if isinstance(step, Stream):
            return self._play(step, entry, ends, on_delta, should_stop)
        self._probe("transport:return")
        if isinstance(step, TransportFailure):
            raise TransportFailure(step.kind, step.status)
        if isinstance(step, FailureKind):
            raise TransportFailure(step, 500 if step is FailureKind.HTTP_STATUS else None)
        with self._guard:
            entry.chunks_billed += 1
            entry.finished = step
        if on_delta is not None and step.content:
            on_delta(step.content)
        return step

    def _play(
        self,
        stream: Stream,
        entry: Entry,
        ends: float | None,
        on_delta: OnDelta | None,
        should_stop: ShouldStop | None,
    ) -> Reply:
        """Deliver ``stream`` into a candidate; any way out but its end abandons it (and the journal says so)."""
        candidate = Candidate(self.max_stream_bytes)
        sent = 0
        try:
            for chunk in stream.chunks:
                if isinstance(chunk, Pause):
                    self._pause(chunk, ends)
                    continue
                if ends is not None and time.monotonic() >= ends:
                    raise TransportFailure(FailureKind.TIMEOUT)
                self._probe("transport:chunk")
                candidate.add(chunk)
                sent += 1
                if on_delta is not None:
                    on_delta(chunk)
                if should_stop is not None and should_stop():
                    raise TransportFailure(FailureKind.CANCELLED)
            if stream.end is StreamEnd.CUT:
                raise TransportFailure(FailureKind.IO)
        except TransportFailure as failure:
            self._abandoned(stream, entry, sent, str(failure.kind))
            self._probe("transport:return")
            raise
        candidate.finish(stream.finish_reason)
        reply = candidate.reply()
        with self._guard:
            entry.chunks_billed += sent
            entry.finished = reply
        self._probe("transport:return")
        return reply

    @staticmethod
    def _pause(pause: Pause, ends: float | None) -> None:
        """Wait for the pause's latch, then its seconds on the run's clock; stop at the deadline (``TIMEOUT``)."""
        if pause.until is not None:
            pause.until.wait()
        if pause.seconds <= 0:
            return
        if ends is not None:
            left = ends - time.monotonic()
            if pause.seconds >= left:
                time.sleep(max(left, 0.0))
                raise TransportFailure(FailureKind.TIMEOUT)
        time.sleep(pause.seconds)

    def _abandoned(self, stream: Stream, entry: Entry, sent: int, why: str) -> None:
        """The client stopped reading after ``sent`` chunks: the provider stops there, or finishes anyway."""
        with self._guard:
            entry.abandoned = why
            if stream.finishes_if_abandoned and stream.end is StreamEnd.DONE:
                entry.chunks_billed += stream.pieces
                entry.finished = Reply(stream.text, stream.finish_reason)
            else:
                entry.chunks_billed += sent

    def _take(self, request: ChatRequest, request_id: str | None) -> tuple[Step, Entry]:
        with self._guard:
            self.requests.append(request.body)
            call = len(self.requests)
            entry = self.journal.received(request_id if request_id is not None else f"call-{call}")
            if self._by_question:
                try:
                    return self._by_question[request.question], entry
                except KeyError:
                    raise UsageError(
                        f"scripted transport {self.name!r} has no reply for question {request.question!r}"
                    ) from None
            if not self._queue:
                raise UsageError(f"scripted transport {self.name!r} has no step left for call {call}")
            return self._queue.popleft(), entry

    def __repr__(self) -> str:
        return f"<ScriptedTransport {self.name} {self.calls} calls, {self.remaining} steps left>"


def replies(*contents: str) -> list[Step]:
    """A script of plain ``stop`` replies, one per content: ``replies("a", "b")``."""
    return [Reply(content, "stop") for content in contents]
