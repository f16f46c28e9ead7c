"""Chat messages and the one request serializer.

The byte budget of article 000 is measured on exactly the bytes a transport sends, so there is a single
serializer: :func:`serialize_request`. It writes an OpenAI-compatible chat-completions body with a fixed key order
(``model`` then ``messages``; ``role`` then ``content``), ``ensure_ascii=False`` so Chinese text costs its UTF-8
bytes rather than six-byte ``\\uXXXX`` escapes, and compact separators. Quotes, backslashes, newlines and control
characters are escaped by JSON and their escapes count against the budget, as they would on the wire.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from enum import StrEnum
from functools import cached_property

from lab.errors import ArgumentTypeError, UsageError

DEFAULT_MODEL = "agnes-3.0-flash"
DEFAULT_SYSTEM_PROMPT = "Answer clearly. If the provided messages do not contain a fact, say you do not know."


class Role(StrEnum):
    """Who wrote a message."""

    SYSTEM = "system"
    USER = "user"
    ASSISTANT = "assistant"


_ROLES = frozenset(Role)
"""Every role; a plain string equal to one's value is in it too (a ``StrEnum`` member hashes as its string)."""


@dataclass(frozen=True, slots=True)
class Message:
    """One immutable chat message.

    >>> Message("user", "hi")
    Message(role=<Role.USER: 'user'>, content='hi')
    """

    role: Role | str
    content: str

    def __post_init__(self) -> None:
        # each field read once: explored runs record every read of code under test, and this runs for every
        # message of every request
        role, content = self.role, self.content
        if role not in _ROLES:
            raise UsageError(f"unknown role {role!r}; use one of system, user, assistant")
        if not isinstance(content, str):
            raise ArgumentTypeError.naming("Message()", "content", "a str", content)
        try:
            content.encode("utf-8")
        except UnicodeEncodeError:
            raise UsageError("message content is not valid Unicode text (it holds a lone surrogate)") from None
        object.__setattr__(self, "role", Role(role))

    def as_json(self) -> dict[str, str]:
        """The message as the wire format's object, keys in their fixed order."""
        return {"role": str(self.role), "content": self.content}


@dataclass(frozen=True)
class ChatRequest:
    """One chat-completions request: model and every message, system first and the question last.

    ``body`` is computed once and is the only serialization: the budget measures it and transports send it.
    """

    model: str
    messages: tuple[Message, ...] = field(default=())

    @cached_property
    def body(self) -> bytes:
        """The UTF-8 request body, byte for byte what is measured and sent."""
        return serialize_request(self.model, self.messages)

    @property
    def size(self) -> int:
        """The request's size in UTF-8 bytes."""
        return len(self.body)

    @property
    def question(self) -> str:
        """The content of the last user message (the question this request asks)."""
        for message in reversed(self.messages):
            if message.role is Role.USER:
                return message.content
        return ""


def chat_request(
    conversation: Iterable[Message], *, model: str = DEFAULT_MODEL, system_prompt: str = DEFAULT_SYSTEM_PROMPT
) -> ChatRequest:
    """The request for ``conversation`` (history, then the question): the system prompt goes first, always."""
    return ChatRequest(model, (Message(Role.SYSTEM, system_prompt), *conversation))


def serialize_request(model: str, messages: Iterable[Message]) -> bytes:
    """Serialize a chat-completions body; the result's length is *the* byte size of the request.

    >>> serialize_request("m", [Message("user", "你好")])
    b'{"model":"m","messages":[{"role":"user","content":"\\xe4\\xbd\\xa0\\xe5\\xa5\\xbd"}]}'
    """
    document = {"model": model, "messages": [message.as_json() for message in messages]}
    text = json.dumps(document, ensure_ascii=False, separators=(",", ":"))
    return text.encode("utf-8")


def is_whole_pairs(history: Iterable[Message]) -> bool:
    """True when ``history`` is a sequence of complete user/assistant pairs, in that order."""
    items = tuple(history)
    if len(items) % 2:
        return False
    return all(items[i].role is Role.USER and items[i + 1].role is Role.ASSISTANT for i in range(0, len(items), 2))
