"""The chat console's offline double: it echoes each question, or plays the outcome a ``!kind`` question names.

Why a double of its own: offline answers depend on what was asked, so the scripted double is given a one-step script
per question. Every row of the reply table can then be tried by hand with no network and no key: ``!timeout``,
``!http_429``, ``!http_status``, ``!io`` and ``!parse`` fail that way, ``!empty`` answers nothing and ``!length``
answers a cut-off text.
"""

from __future__ import annotations

from lab.messages import ChatRequest
from lab.transport.contract import FailureKind, Reply
from lab.transport.scripted import ScriptedTransport, Step

OFFLINE_COMMANDS = (*(f"!{kind.lower()}" for kind in FailureKind), "!empty", "!length")
"""The questions that play an outcome instead of being echoed, in the order the console's start lines list them."""


class OfflineTransport:
    """Answers every question through the scripted double, so the console runs with no network and no key."""

    def __init__(self) -> None:
        self.calls = 0

    def send(self, request: ChatRequest) -> Reply:
        """Answer ``request`` from a one-step script: an echo, or the outcome its ``!kind`` question names."""
        self.calls += 1
        return ScriptedTransport([offline_step(request.question)], name="offline").send(request)

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
        if name in FailureKind.__members__:
            return FailureKind[name]
        if name == "EMPTY":
            return Reply("", "stop")
        if name == "LENGTH":
            return Reply("(offline) an answer cut sh", "length")
    return Reply(f"(offline) you asked: {asked}", "stop")
