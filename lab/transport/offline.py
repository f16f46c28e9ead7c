"""The chat console's offline double: it echoes each question, or plays the outcome a ``!kind`` question names.

Why a double of its own: offline answers depend on what was asked, so the scripted double is given a one-step script
per question. Every row of the reply table can then be tried by hand with no network and no key: ``!timeout``,
``!http_429``, ``!http_status``, ``!io`` and ``!parse`` fail that way, ``!empty`` answers nothing and ``!length``
answers a cut-off text. Streamed (``lab chat --stream``), an echo arrives a word at a time, and ``!cut`` plays a
stream whose connection closes mid-way.
"""

from __future__ import annotations

import re

from lab.messages import ChatRequest
from lab.transport.contract import FailureKind, OnDelta, Reply, ShouldStop
from lab.transport.scripted import ScriptedTransport, Step, Stream, StreamEnd

_PLAYED = tuple(kind for kind in FailureKind if kind is not FailureKind.CANCELLED)
"""The failures a question can play; a cancel is the user's own doing (Ctrl-C while a reply streams)."""

OFFLINE_COMMANDS = (*(f"!{kind.lower()}" for kind in _PLAYED), "!empty", "!length")
"""The questions that play an outcome instead of being echoed, in the order the console's start lines list them."""


class OfflineTransport:
    """Answers every question through the scripted double, so the console runs with no network and no key."""

    def __init__(self) -> None:
        self.calls = 0

    def send(self, request: ChatRequest) -> Reply:
        """Answer ``request`` from a one-step script: an echo, or the outcome its ``!kind`` question names."""
        self.calls += 1
        return ScriptedTransport([offline_step(request.question)], name="offline").send(request)

    @property
    def can_reconcile(self) -> bool:
        """False: an offline answer is made on the spot, and no provider keeps a record of it."""
        return False

    def lookup(self, request_id: str) -> Reply | None:
        """Nothing to ask offline: always ``None``."""
        return None

    def stream(
        self,
        request: ChatRequest,
        *,
        on_delta: OnDelta | None = None,
        should_stop: ShouldStop | None = None,
        request_id: str | None = None,
    ) -> Reply:
        """Answer ``request`` as a stream of words (``!cut`` cuts one mid-way)."""
        self.calls += 1
        step = _as_stream(offline_step(request.question), request.question)
        transport = ScriptedTransport([step], name="offline")
        return transport.stream(request, on_delta=on_delta, should_stop=should_stop, request_id=request_id)

    def __repr__(self) -> str:
        return f"<OfflineTransport {self.calls} calls>"


def offline_step(question: str) -> Step:
    """The scripted step for an offline question: an echo, or the outcome a ``!kind`` question names.

    >>> offline_step("!empty")
    Reply(content='', finish_reason='stop')
    >>> offline_step(" hi ")
    Reply(content='(offline) you asked: hi', finish_reason='stop')
    """
    asked = question.strip()
    if asked.startswith("!"):
        name = asked[1:].upper()
        if name in FailureKind.__members__ and FailureKind[name] in _PLAYED:
            return FailureKind[name]
        if name == "EMPTY":
            return Reply("", "stop")
        if name == "LENGTH":
            return Reply("(offline) an answer cut sh", "length")
    return Reply(f"(offline) you asked: {asked}", "stop")


def _as_stream(step: Step, question: str) -> Step:
    """An offline step as a stream: a reply in word-sized chunks; ``!cut`` half an answer and a closed connection."""
    if question.strip() == "!cut":
        return Stream(("(offline) an answer ", "cut off mid-"), end=StreamEnd.CUT)
    if isinstance(step, Reply) and step.content:
        return Stream(tuple(re.findall(r"\S+\s*|\s+", step.content)), step.finish_reason)
    return step
