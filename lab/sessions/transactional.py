"""TransactionalChat: article 000's chat, where only a complete, validated reply changes history.

A question is tried on a *candidate* copy of the committed history; the committed history is replaced in exactly
one place, after the reply passed validation. Every other path (rejected question, transport failure, empty or
incomplete reply) discards the candidate, so a failure can never leave half a round behind, and a trim made to
fit a request that then failed never touches what was committed.

==========================================  =====================  ===========================
What happened                               ``AskStatus``          Committed history
==========================================  =====================  ===========================
non-empty content, ``finish_reason=stop``   COMMITTED              candidate + the new pair
blank question                              EMPTY_QUESTION         unchanged, no request sent
question alone exceeds the byte budget      QUESTION_TOO_LARGE     unchanged, no request sent
read timeout / deadline                     TIMEOUT                unchanged
HTTP 429                                    HTTP_429               unchanged
other non-2xx                               HTTP_STATUS            unchanged
connection failed, body over its cap        IO                     unchanged
body not JSON, fields missing               PARSE                  unchanged
no reply, or empty, blank or null content   EMPTY                  unchanged
``length``, missing or other finish reason  INCOMPLETE             unchanged
the caller stopped a streamed reply         CANCELLED              unchanged
==========================================  =====================  ===========================

Built with ``stream=True``, the request asks for a streamed reply and ``ask`` may show it while it arrives
(``on_delta``) or stop it (``should_stop``). The chunks go into the transport's candidate, never into the history:
only a stream that ended comes back as a reply, and it is judged by the same table (a cut or oversized stream is
IO, a stalled one TIMEOUT, a stopped one CANCELLED, a ``length`` ending INCOMPLETE). A ``KeyboardInterrupt`` while
the reply streams leaves the same way: nothing was committed, and the candidate is gone with the call.

``ask`` holds the session's lock for the whole call, transport included: one session answers one question at a
time. That is the article's design and its cost (a slow request blocks every later one) is a lesson of the lab.

A question that is not a ``str`` (``None`` included) is the caller's mistake: ``ask`` raises
:class:`~lab.errors.ArgumentTypeError` naming ``question`` before it takes the lock, rather than answer with a status.
What comes back from the model is judged, not refused: no reply at all (the article's ``reply == null``) and
``None`` content are EMPTY, a ``None`` finish reason is INCOMPLETE. A transport that breaks its contract (returns
something that is not a :class:`~lab.transport.contract.Reply`, or a reply whose content or finish reason is
neither ``str`` nor ``None``) is a programming error and raises the same error, naming the field.
"""

from __future__ import annotations

import threading
from contextlib import AbstractContextManager
from dataclasses import dataclass
from enum import StrEnum

from lab.errors import ArgumentTypeError, UsageError
from lab.hooks import Probe, no_probe
from lab.messages import DEFAULT_MODEL, DEFAULT_SYSTEM_PROMPT, ChatRequest, Message, Role, chat_request
from lab.transport.contract import OnDelta, Reply, ShouldStop, StreamingTransport, Transport, TransportFailure
from lab.transport.streaming import streaming_request

DEFAULT_MAX_PAIRS = 4
DEFAULT_MAX_REQUEST_BYTES = 16_000


class AskStatus(StrEnum):
    """How one ``ask`` ended. Only COMMITTED changes the history."""

    COMMITTED = "COMMITTED"
    EMPTY_QUESTION = "EMPTY_QUESTION"
    QUESTION_TOO_LARGE = "QUESTION_TOO_LARGE"
    TIMEOUT = "TIMEOUT"
    HTTP_429 = "HTTP_429"
    HTTP_STATUS = "HTTP_STATUS"
    IO = "IO"
    PARSE = "PARSE"
    EMPTY = "EMPTY"
    INCOMPLETE = "INCOMPLETE"
    CANCELLED = "CANCELLED"


@dataclass(frozen=True)
class AskResult:
    """The outcome of one ``ask``: its status, the answer when committed, and a short detail otherwise.

    ``sent`` says whether a request reached the transport; ``request_bytes`` is the size of the request sent
    (0 when none was) and ``trimmed_pairs`` how many old pairs the candidate dropped to fit.
    """

    status: AskStatus
    answer: str | None = None
    detail: str = ""
    sent: bool = False
    request_bytes: int = 0
    trimmed_pairs: int = 0

    @property
    def committed(self) -> bool:
        """True when this ask replaced the committed history."""
        return self.status is AskStatus.COMMITTED


class TransactionalChat:
    """A chat whose history holds only complete user/assistant pairs, changed only by a validated reply.

    >>> from lab.transport.scripted import ScriptedTransport, replies
    >>> chat = TransactionalChat(ScriptedTransport(replies("Paris")))
    >>> chat.ask("Capital of France?").status
    <AskStatus.COMMITTED: 'COMMITTED'>
    >>> [m.content for m in chat.snapshot()]
    ['Capital of France?', 'Paris']
    """

    def __init__(
        self,
        transport: Transport,
        *,
        model: str = DEFAULT_MODEL,
        system_prompt: str = DEFAULT_SYSTEM_PROMPT,
        max_pairs: int = DEFAULT_MAX_PAIRS,
        max_request_bytes: int = DEFAULT_MAX_REQUEST_BYTES,
        lock: AbstractContextManager[object] | None = None,
        probe: Probe = no_probe,
        stream: bool = False,
    ) -> None:
        if max_pairs < 0:
            raise UsageError(f"max_pairs must be >= 0, not {max_pairs}")
        self._streamer: StreamingTransport | None = None
        if stream:
            if not isinstance(transport, StreamingTransport):
                raise UsageError(f"stream=True needs a transport that can stream; {type(transport).__name__} cannot")
            self._streamer = transport  # checked once here: the protocol check is costly under line recording
        self._transport = transport
        self.stream = stream
        self.model = model
        self.system_prompt = system_prompt
        self.max_pairs = max_pairs
        self.max_request_bytes = max_request_bytes
        self._lock: AbstractContextManager[object] = lock if lock is not None else threading.Lock()
        self._probe = probe
        self._committed: tuple[Message, ...] = ()

    def snapshot(self) -> tuple[Message, ...]:
        """The committed history as an immutable tuple.

        No lock is needed: the history is an immutable tuple replaced by a single assignment, so a reader sees
        either the old history or the new one, never a mix.
        """
        return self._committed

    def build_request(self, history: tuple[Message, ...] | list[Message]) -> ChatRequest:
        """The request for ``history`` (whose last message is the question): system prompt first, never trimmed.

        With ``stream=True`` it asks for a stream, and the budget measures that body (``"stream":true`` included)."""
        request = chat_request(history, model=self.model, system_prompt=self.system_prompt)
        return streaming_request(request) if self.stream else request

    def ask(
        self,
        question: str,
        *,
        on_delta: OnDelta | None = None,
        should_stop: ShouldStop | None = None,
        request_id: str | None = None,
    ) -> AskResult:
        """Ask ``question`` on a candidate copy; commit the candidate plus the answer only if the reply is valid.

        Streaming only: ``on_delta`` sees each piece as it arrives, ``should_stop`` may stop the stream
        (CANCELLED); ``request_id`` travels to the provider as the idempotency key.
        """
        if not isinstance(question, str):
            raise ArgumentTypeError.naming("ask()", "question", "a str", question)
        self._probe("ask:enter")
        with self._lock:
            self._probe("ask:locked")
            return self._ask_locked(question, on_delta, should_stop, request_id)

    def _send(
        self, request: ChatRequest, on_delta: OnDelta | None, should_stop: ShouldStop | None, request_id: str | None
    ) -> Reply:
        if self._streamer is not None:
            return self._streamer.stream(request, on_delta=on_delta, should_stop=should_stop, request_id=request_id)
        return self._transport.send(request)

    def _ask_locked(
        self, question: str, on_delta: OnDelta | None, should_stop: ShouldStop | None, request_id: str | None
    ) -> AskResult:
        if not question.strip():
            return AskResult(AskStatus.EMPTY_QUESTION, detail="the question is blank")
        user = Message(Role.USER, question)
        alone = self.build_request([user]).size
        if alone > self.max_request_bytes:
            return AskResult(
                AskStatus.QUESTION_TOO_LARGE,
                detail=f"the question alone needs {alone} bytes, the budget is {self.max_request_bytes}",
            )

        candidate = [*self._committed, user]
        trimmed = 0
        while len(candidate) - 1 > 2 * self.max_pairs:
            del candidate[0:2]
            trimmed += 1
        request = self.build_request(candidate)
        while request.size > self.max_request_bytes and len(candidate) > 1:
            del candidate[0:2]
            trimmed += 1
            request = self.build_request(candidate)

        self._probe("ask:send")
        try:
            reply = self._send(request, on_delta, should_stop, request_id)
        except TransportFailure as failure:
            self._probe("ask:return")
            return AskResult(
                AskStatus(failure.kind.value),
                detail=str(failure),
                sent=True,
                request_bytes=request.size,
                trimmed_pairs=trimmed,
            )
        self._probe("ask:return")

        if reply is None:
            return AskResult(
                AskStatus.EMPTY,
                detail="the transport returned no reply",
                sent=True,
                request_bytes=request.size,
                trimmed_pairs=trimmed,
            )
        _check_reply(reply)
        if reply.content is None or not reply.content.strip():
            return AskResult(
                AskStatus.EMPTY,
                detail="the reply has no content",
                sent=True,
                request_bytes=request.size,
                trimmed_pairs=trimmed,
            )
        if reply.finish_reason != "stop":
            return AskResult(
                AskStatus.INCOMPLETE,
                detail=f"finish_reason={reply.finish_reason!r}",
                sent=True,
                request_bytes=request.size,
                trimmed_pairs=trimmed,
            )

        candidate.append(Message(Role.ASSISTANT, reply.content))
        while len(candidate) > 2 * self.max_pairs:
            del candidate[0:2]
        self._probe("ask:commit")
        self._committed = tuple(candidate)  # the only place the committed history is replaced
        return AskResult(
            AskStatus.COMMITTED, answer=reply.content, sent=True, request_bytes=request.size, trimmed_pairs=trimmed
        )

    def __repr__(self) -> str:
        return f"<TransactionalChat {len(self._committed) // 2} pairs>"


def _check_reply(reply: object) -> None:
    """Refuse what no transport may return: the session judges a reply's text, not its Python type."""
    if not isinstance(reply, Reply):
        raise ArgumentTypeError.naming("ask()", "the transport's reply", "a Reply", reply)
    for name, value in (("reply.content", reply.content), ("reply.finish_reason", reply.finish_reason)):
        if value is not None and not isinstance(value, str):
            raise ArgumentTypeError.naming("ask()", name, "a str or None", value)
