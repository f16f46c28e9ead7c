"""A transport that never touches the network: it answers from a script.

The double records every request body it receives (byte for byte what a real transport would send) and counts its
calls, so a test can prove "zero transport calls" or inspect what the byte budget let through. A step can be held
back until something opens (any object with a ``wait()`` method, typically a lab latch): that is how the lab says
"this reply is slow" without measuring time.
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Protocol

from lab.errors import UsageError
from lab.hooks import Probe, no_probe
from lab.messages import ChatRequest
from lab.transport.contract import FailureKind, Reply, TransportFailure


class Waitable(Protocol):
    """Anything a held reply can wait on: a lab ``Latch`` or ``Event``, or a ``threading.Event``."""

    def wait(self) -> object: ...


@dataclass(frozen=True)
class Held:
    """A scripted step that is delivered only after ``until`` opens."""

    step: Reply | FailureKind
    until: Waitable


Step = Reply | FailureKind | Held


class ScriptedTransport:
    """Answers each ``send`` from a queue of steps, or by the question asked.

    >>> transport = ScriptedTransport([Reply("4"), FailureKind.TIMEOUT])
    >>> transport.send(ChatRequest("m")).content
    '4'
    >>> transport.calls
    1

    With ``by_question`` the answer depends on *which* question is asked, not on call order, so two actors racing
    for one transport get the same replies under every interleaving.
    """

    def __init__(
        self,
        script: Iterable[Step] = (),
        *,
        by_question: Mapping[str, Step] | None = None,
        probe: Probe = no_probe,
        name: str = "transport",
    ) -> None:
        self.name = name
        self._queue: deque[Step] = deque(script)
        self._by_question = dict(by_question or {})
        self._probe = probe
        self._guard = threading.Lock()
        self.requests: list[bytes] = []

    @property
    def calls(self) -> int:
        """How many times ``send`` was called."""
        return len(self.requests)

    @property
    def remaining(self) -> int:
        """How many queued steps are left."""
        return len(self._queue)

    def send(self, request: ChatRequest) -> Reply:
        """Record the request, wait if the step is held, then return its reply or raise its failure."""
        self._probe("transport:send")
        step = self._take(request)
        if isinstance(step, Held):
            step.until.wait()
            step = step.step
        self._probe("transport:return")
        if isinstance(step, TransportFailure):
            raise TransportFailure(step.kind, step.status)
        if isinstance(step, FailureKind):
            raise TransportFailure(step, 500 if step is FailureKind.HTTP_STATUS else None)
        return step

    def _take(self, request: ChatRequest) -> Step:
        with self._guard:
            self.requests.append(request.body)
            call = len(self.requests)
            if self._by_question:
                try:
                    return self._by_question[request.question]
                except KeyError:
                    raise UsageError(
                        f"scripted transport {self.name!r} has no reply for question {request.question!r}"
                    ) from None
            if not self._queue:
                raise UsageError(f"scripted transport {self.name!r} has no step left for call {call}")
            return self._queue.popleft()

    def __repr__(self) -> str:
        return f"<ScriptedTransport {self.name} {self.calls} calls, {self.remaining} steps left>"


def replies(*contents: str) -> list[Step]:
    """A script of plain ``stop`` replies, one per content: ``replies("a", "b")``."""
    return [Reply(content, "stop") for content in contents]
