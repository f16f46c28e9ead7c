"""Reading an OpenAI-compatible ``"stream": true`` response: server-sent events into a candidate.

The wire form is ``data: {json}`` lines separated by blank lines, ending with ``data: [DONE]``; each JSON event
carries ``choices[0].delta.content`` (a piece of text, or nothing) and, on the last one, ``choices[0].finish_reason``.
Comments (``: keep-alive``) and other fields (``event:``, ``id:``, ``retry:``) are skipped. What this module
decides, and nothing else:

* every piece goes into the :class:`~lab.transport.streaming.Candidate`; only ``[DONE]``, or a finish reason followed
  by the end of the connection, ends the stream (a stream that stops with neither was cut: ``IO``);
* the bytes read count against the stream's budget *in total*, and no single line may be longer than what is left
  of it (``IO``), so a server cannot make the client buffer without limit;
* an event that is not JSON or not shaped like a chunk is ``PARSE``; an event holding an ``error`` object ends the
  call as ``IO`` (the service broke off), its text never read;
* after each event ``should_stop`` is asked; a true answer abandons the stream (``CANCELLED``).

Timeouts are not here: the socket under the response enforces the read timeout and the deadline on every read.
"""

from __future__ import annotations

import json
from typing import Protocol

from lab.transport.contract import FailureKind, OnDelta, Reply, ShouldStop, TransportFailure
from lab.transport.streaming import Candidate

DONE = b"[DONE]"


class LineSource(Protocol):
    """What the events are read from: ``http.client.HTTPResponse`` (or a test's ``io.BytesIO``)."""

    def readline(self, limit: int = -1, /) -> bytes: ...


def read_events(
    source: LineSource, candidate: Candidate, *, on_delta: OnDelta | None = None, should_stop: ShouldStop | None = None
) -> Reply:
    """Read events from ``source`` into ``candidate`` until the stream ends; the finished reply, or a failure."""
    budget = candidate.max_bytes
    read = 0
    data: list[bytes] = []
    while True:
        line = source.readline(budget - read + 1)
        read += len(line)
        if read > budget:
            raise TransportFailure(FailureKind.IO)
        if not line:  # the connection closed
            if data:
                _dispatch(b"\n".join(data), candidate, on_delta)
            break
        line = line.rstrip(b"\r\n")
        if line:
            field, _, value = line.partition(b":")
            if field == b"data":
                data.append(value.removeprefix(b" "))
            continue
        if data:  # a blank line dispatches the event
            _dispatch(b"\n".join(data), candidate, on_delta)
            data.clear()
            if candidate.ended:
                break
            if should_stop is not None and should_stop():
                raise TransportFailure(FailureKind.CANCELLED)
    if not candidate.ended and candidate.finish_reason is not None:
        candidate.finish(None)  # the last chunk said why it stopped; the connection then closed without [DONE]
    return candidate.reply()


def _dispatch(data: bytes, candidate: Candidate, on_delta: OnDelta | None) -> None:
    """One event: the end marker, or a chunk whose text and finish reason go into the candidate."""
    if data.strip() == DONE:
        candidate.finish(None)
        return
    try:
        event = json.loads(data)
    except (ValueError, RecursionError):
        raise TransportFailure(FailureKind.PARSE) from None
    if not isinstance(event, dict):
        raise TransportFailure(FailureKind.PARSE)
    if "error" in event:
        raise TransportFailure(FailureKind.IO)
    choices = event.get("choices")
    if not isinstance(choices, list):
        raise TransportFailure(FailureKind.PARSE)
    if not choices:  # a usage-only event, sent by some services before [DONE]
        return
    choice = choices[0]
    delta = choice.get("delta", {}) if isinstance(choice, dict) else None
    if not isinstance(choice, dict) or not isinstance(delta, dict):
        raise TransportFailure(FailureKind.PARSE)
    content = delta.get("content")
    reason = choice.get("finish_reason")
    if not isinstance(content, str | None) or not isinstance(reason, str | None):
        raise TransportFailure(FailureKind.PARSE)
    if content:
        candidate.add(content)
        if on_delta is not None:
            on_delta(content)
    if reason is not None:
        candidate.note_reason(reason)
