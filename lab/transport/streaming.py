"""What every streaming transport shares: the request that asks for a stream, and the candidate chunks go into.

A streamed reply is a candidate until it ends (article 000's rule, applied chunk by chunk). :class:`Candidate`
collects the pieces, keeps their total inside the size budget (256 KiB, as for a whole body), and gives a
:class:`~lab.transport.contract.Reply` only once the stream said it ended. The scripted double and the HTTP
transport both use it, so "what counts as a finished stream" is decided in one place.

The streaming request is the one serializer's body with ``"stream":true`` appended (:func:`streaming_request`), so
the byte budget a session measures is still exactly the bytes that go on the wire.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

from lab.messages import ChatRequest, serialize_request
from lab.transport.contract import FailureKind, Reply, TransportFailure

DEFAULT_MAX_STREAM_BYTES = 256 * 1024
"""The whole stream's budget, as for a whole body: past it nothing is kept and the call fails with ``IO``."""

_STREAM_FLAG = b',"stream":true}'


@dataclass(frozen=True)
class StreamingRequest(ChatRequest):
    """A chat request that asks for a streamed reply: the same body with ``"stream":true`` as its last key."""

    @cached_property
    def body(self) -> bytes:
        """The UTF-8 request body, byte for byte what is measured and sent."""
        return serialize_request(self.model, self.messages)[:-1] + _STREAM_FLAG


def streaming_request(request: ChatRequest) -> StreamingRequest:
    """``request`` asking for a stream (a streaming request is returned as it is).

    >>> from lab.messages import Message
    >>> streaming_request(ChatRequest("m", (Message("user", "hi"),))).body
    b'{"model":"m","messages":[{"role":"user","content":"hi"}],"stream":true}'
    """
    if isinstance(request, StreamingRequest):
        return request
    return StreamingRequest(request.model, request.messages)


def is_streaming(body: bytes) -> bool:
    """True when a request body asks for a stream (what a provider, scripted or real, reads from it)."""
    return body.endswith(_STREAM_FLAG)


class Candidate:
    """The text of one streamed reply while it arrives; a :class:`Reply` only after the stream ended.

    >>> candidate = Candidate()
    >>> candidate.add("Par"); candidate.add("is")
    >>> candidate.finish("stop")
    >>> candidate.reply()
    Reply(content='Paris', finish_reason='stop')
    """

    def __init__(self, max_bytes: int = DEFAULT_MAX_STREAM_BYTES) -> None:
        self.max_bytes = max_bytes
        self.size = 0
        self.chunks = 0
        self.finish_reason: str | None = None
        self.ended = False
        self._parts: list[str] = []

    def add(self, delta: str) -> None:
        """Take one piece of text; past the budget the candidate is dropped and the call fails with ``IO``."""
        if self.ended:
            raise TransportFailure(FailureKind.PARSE)  # text after the end: not a stream this contract knows
        self.size += len(delta.encode("utf-8", "surrogatepass"))
        self.chunks += 1
        if self.size > self.max_bytes:
            self._parts.clear()
            raise TransportFailure(FailureKind.IO)
        self._parts.append(delta)

    def finish(self, reason: str | None) -> None:
        """The stream said why it stopped (``None``: it ended with no reason, the session's INCOMPLETE)."""
        if reason is not None:
            self.finish_reason = reason
        self.ended = True

    def note_reason(self, reason: str) -> None:
        """A finish reason arrived before the end marker (the OpenAI form: a last chunk, then ``[DONE]``)."""
        self.finish_reason = reason

    @property
    def text(self) -> str:
        """What arrived so far (shown while streaming; never committed unless the stream ends)."""
        return "".join(self._parts)

    def reply(self) -> Reply:
        """The finished reply; a stream that never ended was cut, and a cut stream is ``IO``."""
        if not self.ended:
            raise TransportFailure(FailureKind.IO)
        return Reply(self.text, self.finish_reason)
