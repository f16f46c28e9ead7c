"""TransactionalChat: article 000's candidate/commit rules."""

from __future__ import annotations

import json
import threading

import pytest

from lab.errors import ArgumentTypeError, UsageError
from lab.messages import Message, Role, is_whole_pairs
from lab.sessions.transactional import AskStatus, TransactionalChat
from lab.transport.contract import FailureKind, Reply, TransportFailure
from lab.transport.scripted import ScriptedTransport, Step, replies


def _chat(script: list[Step], **options: object) -> tuple[TransactionalChat, ScriptedTransport]:
    transport = ScriptedTransport(script)
    return TransactionalChat(transport, **options), transport  # type: ignore[arg-type]


def _contents(chat: TransactionalChat) -> list[str]:
    return [m.content for m in chat.snapshot()]


def _sent_messages(body: bytes) -> list[tuple[str, str]]:
    return [(m["role"], m["content"]) for m in json.loads(body)["messages"]]


class TestReplyTable:
    def test_stop_with_content_commits_the_pair(self) -> None:
        """A non-empty reply with finish_reason stop commits one complete pair."""
        chat, _ = _chat(replies("Paris"))
        result = chat.ask("Capital of France?")
        assert result.status is AskStatus.COMMITTED and result.answer == "Paris"
        assert chat.snapshot() == (Message(Role.USER, "Capital of France?"), Message(Role.ASSISTANT, "Paris"))

    @pytest.mark.parametrize(
        ("step", "status"),
        [
            (FailureKind.HTTP_429, AskStatus.HTTP_429),
            (TransportFailure(FailureKind.HTTP_STATUS, 500), AskStatus.HTTP_STATUS),
            (TransportFailure(FailureKind.HTTP_STATUS, 404), AskStatus.HTTP_STATUS),
            (FailureKind.TIMEOUT, AskStatus.TIMEOUT),
            (FailureKind.IO, AskStatus.IO),
            (FailureKind.PARSE, AskStatus.PARSE),
            (Reply("", "stop"), AskStatus.EMPTY),
            (Reply("  \n\t", "stop"), AskStatus.EMPTY),
            (Reply(None, "stop"), AskStatus.EMPTY),
            (Reply("half an answer", "length"), AskStatus.INCOMPLETE),
            (Reply("no reason", None), AskStatus.INCOMPLETE),
            (Reply("filtered", "content_filter"), AskStatus.INCOMPLETE),
            (Reply("", "length"), AskStatus.EMPTY),
        ],
    )
    def test_every_failure_commits_nothing(self, step: Step, status: AskStatus) -> None:
        """Each failing row of the reply table leaves the committed history exactly as it was."""
        chat, transport = _chat([Reply("first"), step])
        chat.ask("one")
        before = chat.snapshot()
        result = chat.ask("two")
        assert result.status is status
        assert not result.committed and result.sent
        assert chat.snapshot() is before
        assert transport.calls == 2

    def test_incomplete_names_the_finish_reason(self) -> None:
        """An incomplete reply's detail names its finish reason."""
        chat, _ = _chat([Reply("x", "length")])
        assert chat.ask("q").detail == "finish_reason='length'"


class TestRejectedBeforeTransport:
    @pytest.mark.parametrize("question", ["", "   ", "\n\t"])
    def test_blank_question(self, question: str) -> None:
        """A blank question is rejected with zero transport calls."""
        chat, transport = _chat(replies("never"))
        result = chat.ask(question)
        assert result.status is AskStatus.EMPTY_QUESTION and not result.sent
        assert transport.calls == 0

    def test_oversized_question(self) -> None:
        """A question that alone exceeds the budget is rejected, never truncated, with zero calls."""
        chat, transport = _chat(replies("never"), max_request_bytes=16_000)
        result = chat.ask("字" * 6_000)
        assert result.status is AskStatus.QUESTION_TOO_LARGE
        assert "16000" in result.detail
        assert transport.calls == 0 and chat.snapshot() == ()

    def test_question_exactly_at_budget_is_sent(self) -> None:
        """A question whose request is exactly the budget is sent; one byte more is rejected."""
        probe_chat, _ = _chat([])
        overhead = probe_chat.build_request([Message(Role.USER, "")]).size
        chat, transport = _chat(replies("ok"), max_request_bytes=overhead + 30)
        assert chat.ask("好" * 10).status is AskStatus.COMMITTED  # 30 bytes exactly
        assert chat.ask("好" * 10 + "x").status is AskStatus.QUESTION_TOO_LARGE
        assert transport.calls == 1


class TestPairEviction:
    def test_request_carries_at_most_four_pairs_and_history_keeps_four(self) -> None:
        """The 6th request carries 4 old pairs plus the question; the committed history keeps 4 pairs."""
        chat, transport = _chat(replies(*[f"a{i}" for i in range(1, 7)]))
        for i in range(1, 7):
            assert chat.ask(f"q{i}").committed
        sent = _sent_messages(transport.requests[-1])
        assert sent[0][0] == "system"
        assert [c for _, c in sent[1:]] == ["q2", "a2", "q3", "a3", "q4", "a4", "q5", "a5", "q6"]
        assert _contents(chat) == ["q3", "a3", "q4", "a4", "q5", "a5", "q6", "a6"]
        assert is_whole_pairs(chat.snapshot())

    def test_fifth_request_drops_the_oldest_whole_pair(self) -> None:
        """The boundary starts at a user message, never at an orphan assistant reply."""
        chat, transport = _chat(replies(*[f"a{i}" for i in range(1, 6)]))
        for i in range(1, 6):
            chat.ask(f"q{i}")
        sent = _sent_messages(transport.requests[4])
        assert sent[1] == ("user", "q1")  # 4 pairs + question: nothing dropped yet
        assert len(sent) == 1 + 9
        assert _contents(chat)[0] == "q2"

    def test_custom_max_pairs(self) -> None:
        """max_pairs bounds both the request and the committed history."""
        chat, transport = _chat(replies("a1", "a2", "a3"), max_pairs=1)
        for i in range(1, 4):
            chat.ask(f"q{i}")
        assert [c for _, c in _sent_messages(transport.requests[2])[1:]] == ["q2", "a2", "q3"]
        assert _contents(chat) == ["q3", "a3"]


class TestByteBudget:
    def test_trims_whole_pairs_until_it_fits(self) -> None:
        """Over the budget, the oldest whole pairs are dropped until the request fits; the system prompt stays."""
        chat, transport = _chat(replies("長" * 100, "短", "ok"), max_request_bytes=1_000)
        chat.ask("first")
        chat.ask("second")
        result = chat.ask("third " + "問" * 150)
        assert result.committed and result.trimmed_pairs == 1
        sent = transport.requests[2]
        assert len(sent) <= 1_000
        assert [c for r, c in _sent_messages(sent)[1:-1]] == ["second", "短"]
        assert _sent_messages(sent)[0][0] == "system"

    def test_escapes_count_against_the_budget(self) -> None:
        """Quotes and control characters are measured escaped, as sent."""
        chat, transport = _chat(replies('"\\\n' * 100, "ok"), max_request_bytes=800)
        chat.ask("q1")
        raw_len = len(('"\\\n' * 100).encode())
        result = chat.ask("q2")
        assert result.committed
        # Unescaped, the request would be 851 - 300 = 551 bytes and fit; escaped, it is 851 and must be trimmed.
        assert raw_len == 300 and result.trimmed_pairs == 1
        assert len(transport.requests[1]) <= 800

    def test_request_bytes_is_the_sent_size(self) -> None:
        """The size reported is the size of the bytes the transport received."""
        chat, transport = _chat(replies("ok"))
        result = chat.ask("好")
        assert result.request_bytes == len(transport.requests[0])


class TestArticleStory:
    def test_timeout_after_trim_then_success(self) -> None:
        """A long reply is committed; the next question forces a trim and times out; history is unchanged.

        The next success commits the trimmed candidate and the trimmed pair never comes back.
        """
        chat, transport = _chat(
            [Reply("short"), Reply("長" * 200), FailureKind.TIMEOUT, Reply("after")], max_request_bytes=1_100
        )
        chat.ask("q1")
        chat.ask("q2")
        committed = chat.snapshot()
        assert _contents(chat) == ["q1", "short", "q2", "長" * 200]

        failed = chat.ask("q3 " + "問" * 150)
        assert failed.status is AskStatus.TIMEOUT and failed.trimmed_pairs >= 1
        assert chat.snapshot() == committed

        ok = chat.ask("q4 " + "問" * 150)
        assert ok.committed and ok.trimmed_pairs >= 1
        assert "q1" not in _contents(chat)
        sent_last = [c for _, c in _sent_messages(transport.requests[-1])[1:]]
        assert [c for c in _contents(chat)[:-2]] == sent_last[:-1]
        assert is_whole_pairs(chat.snapshot())


class TestSnapshots:
    def test_snapshot_is_an_immutable_tuple_that_later_commits_do_not_change(self) -> None:
        """A snapshot is a tuple; a later commit does not change it."""
        chat, _ = _chat(replies("a1", "a2"))
        chat.ask("q1")
        first = chat.snapshot()
        assert isinstance(first, tuple)
        chat.ask("q2")
        assert [m.content for m in first] == ["q1", "a1"]

    @pytest.mark.timeout(5)
    def test_ask_holds_the_lock_during_the_transport_call(self) -> None:
        """The injected lock is held while the transport runs: one question at a time."""
        lock = threading.Lock()

        class _Checking:
            def __init__(self) -> None:
                self.held: list[bool] = []

            def send(self, request: object) -> Reply:
                self.held.append(lock.locked())
                return Reply("a")

        transport = _Checking()
        chat = TransactionalChat(transport, lock=lock)  # type: ignore[arg-type]
        chat.ask("q")
        assert transport.held == [True]
        assert not lock.locked()

    def test_probe_points_in_order(self) -> None:
        """ask calls its probe at enter, locked, send, return and commit."""
        points: list[str] = []
        chat = TransactionalChat(ScriptedTransport(replies("a")), probe=points.append)
        chat.ask("q")
        assert points == ["ask:enter", "ask:locked", "ask:send", "ask:return", "ask:commit"]


class _Returns:
    """A transport that returns one fixed object, whatever it is: to test what ask makes of a broken contract."""

    def __init__(self, result: object) -> None:
        self.result = result
        self.calls = 0

    def send(self, request: object) -> object:
        self.calls += 1
        return self.result


class TestArgumentTypes:
    """The caller's mistakes raise one clear line naming the parameter; what the model sends back gets a status."""

    @pytest.mark.parametrize(("question", "got"), [(None, "None"), (42, "int"), (b"q", "bytes"), (["q"], "list")])
    def test_question_of_the_wrong_type(self, question: object, got: str) -> None:
        """A non-str question raises before the lock and the probe; nothing is sent, nothing changes."""
        points: list[str] = []
        transport = ScriptedTransport(replies("a"))
        chat = TransactionalChat(transport, probe=points.append)
        with pytest.raises(ArgumentTypeError, match=f"^ask\\(\\) needs question to be a str, not {got}$") as raised:
            chat.ask(question)  # type: ignore[arg-type]
        assert isinstance(raised.value, UsageError) and isinstance(raised.value, TypeError)
        assert (points, transport.calls, chat.snapshot()) == ([], 0, ())

    def test_no_reply_at_all_is_empty(self) -> None:
        """Article 000 treats ``reply == null`` like empty content: EMPTY, the request was sent, nothing commits."""
        transport = _Returns(None)
        chat = TransactionalChat(transport)  # type: ignore[arg-type]
        result = chat.ask("q")
        assert (result.status, result.sent, result.detail) == (AskStatus.EMPTY, True, "the transport returned no reply")
        assert (transport.calls, chat.snapshot()) == (1, ())

    @pytest.mark.parametrize(
        ("reply", "name", "got"),
        [
            ({"content": "a"}, "the transport's reply", "dict"),
            (Reply(42, "stop"), "reply.content", "int"),  # type: ignore[arg-type]
            (Reply(b"a", "stop"), "reply.content", "bytes"),  # type: ignore[arg-type]
            (Reply("a", 1), "reply.finish_reason", "int"),  # type: ignore[arg-type]
        ],
    )
    def test_transport_breaking_its_contract(self, reply: object, name: str, got: str) -> None:
        """A reply of the wrong type is a programming error, named; the lock is released and nothing commits."""
        lock = threading.Lock()
        chat = TransactionalChat(_Returns(reply), lock=lock)  # type: ignore[arg-type]
        with pytest.raises(ArgumentTypeError, match=f"^ask\\(\\) needs {name} to be .*, not {got}$"):
            chat.ask("q")
        assert chat.snapshot() == () and not lock.locked()
