"""Messages and the one request serializer."""

from __future__ import annotations

import dataclasses
import json

import pytest

from lab.errors import ArgumentTypeError, UsageError
from lab.messages import ChatRequest, Message, Role, is_whole_pairs, serialize_request


class TestMessage:
    def test_is_immutable(self) -> None:
        """A message cannot be changed after it is made."""
        message = Message("user", "hi")
        with pytest.raises(dataclasses.FrozenInstanceError):
            message.content = "changed"  # type: ignore[misc]

    def test_rejects_unknown_role(self) -> None:
        """An unknown role is refused with the roles that exist."""
        with pytest.raises(UsageError, match="system, user, assistant"):
            Message("tool", "x")

    def test_rejects_lone_surrogate(self) -> None:
        """Text that UTF-8 cannot encode is refused at construction, not at send time."""
        with pytest.raises(UsageError, match="lone surrogate"):
            Message("user", "\ud800")

    def test_rejects_content_that_is_not_text(self) -> None:
        """Content of another type is an ArgumentTypeError naming the parameter (still a TypeError)."""
        with pytest.raises(ArgumentTypeError, match=r"^Message\(\) needs content to be a str, not bytes$"):
            Message("user", b"hi")  # type: ignore[arg-type]


class TestSerializer:
    def test_fixed_key_order_and_compact(self) -> None:
        """The body is model then messages, role then content, without spaces."""
        body = serialize_request("m", [Message("system", "s"), Message("user", "q")])
        assert body == b'{"model":"m","messages":[{"role":"system","content":"s"},{"role":"user","content":"q"}]}'

    def test_chinese_is_utf8_not_escaped(self) -> None:
        """Chinese text costs its UTF-8 bytes (3 per character), not \\u escapes."""
        small = serialize_request("m", [Message("user", "")])
        big = serialize_request("m", [Message("user", "逾時之後")])
        assert len(big) - len(small) == 12
        assert "逾時之後".encode() in big

    @pytest.mark.parametrize(
        ("text", "escaped_len"),
        [('"', 2), ("\\", 2), ("\n", 2), ("\x01", 6), ("\t", 2)],
    )
    def test_json_escapes_count(self, text: str, escaped_len: int) -> None:
        """Characters JSON escapes cost their escaped length in the budget."""
        base = len(serialize_request("m", [Message("user", "")]))
        assert len(serialize_request("m", [Message("user", text)])) - base == escaped_len

    def test_body_round_trips(self) -> None:
        """The body is valid JSON holding exactly the messages given."""
        request = ChatRequest("m", (Message("system", "s"), Message("user", 'a"b\\c\n好')))
        assert json.loads(request.body) == {
            "model": "m",
            "messages": [{"role": "system", "content": "s"}, {"role": "user", "content": 'a"b\\c\n好'}],
        }
        assert request.size == len(request.body)
        assert request.question == 'a"b\\c\n好'


class TestWholePairs:
    def test_pairs(self) -> None:
        """User/assistant pairs in order are whole; an orphan reply or odd length is not."""
        u, a = Message(Role.USER, "q"), Message(Role.ASSISTANT, "a")
        assert is_whole_pairs([])
        assert is_whole_pairs([u, a, u, a])
        assert not is_whole_pairs([a, u])
        assert not is_whole_pairs([u, a, u])
