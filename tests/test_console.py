"""The chat console: offline and live, both sessions, argument errors, and what it never prints."""

from __future__ import annotations

import io
import json
import os
import pty
import select
import subprocess
import sys
import threading
import unicodedata
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from lab.console import main, versioned_asker
from lab.messages import ChatRequest, Message, Role
from lab.sessions.transactional import TransactionalChat
from lab.sessions.versioned import VersionedSession
from lab.terminal import _line_editing
from lab.transport.contract import Reply
from lab.transport.offline import OFFLINE_COMMANDS

ROOT = Path(__file__).resolve().parent.parent
FAKE_KEY = "sk-fake-console-5e1d2c3b4a-never-print-me"
SECRET = "SECRET-console-500-body-91ab"

Answer = Callable[[list[dict[str, str]]], tuple[int, bytes]]


def _completion(content: str) -> bytes:
    choice = {"message": {"role": "assistant", "content": content}, "finish_reason": "stop"}
    return json.dumps({"choices": [choice]}).encode()


def _echo(messages: list[dict[str, str]]) -> tuple[int, bytes]:
    return 200, _completion(f"live answer to {messages[-1]['content']!r} after {len(messages)} messages")


def _fail_second(messages: list[dict[str, str]]) -> tuple[int, bytes]:
    if len(messages) > 2:
        return 500, json.dumps({"error": f"stack trace with {SECRET}"}).encode()
    return _echo(messages)


class _ChatServer:
    """A loopback chat-completions server that answers from the messages it receives and records each request."""

    def __init__(self, answer: Answer) -> None:
        self.bodies: list[bytes] = []
        self.authorizations: list[str] = []
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
                outer.bodies.append(body)
                outer.authorizations.append(self.headers.get("Authorization", ""))
                status, payload = answer(json.loads(body)["messages"])
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            def log_message(self, format: str, *args: Any) -> None:
                """Stay quiet."""

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._thread = threading.Thread(target=self._httpd.serve_forever, kwargs={"poll_interval": 0.01}, daemon=True)
        self._thread.start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._httpd.server_address[1]}/v1"

    def close(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join(timeout=2)


@pytest.fixture
def chat_server() -> Iterator[Callable[[Answer], _ChatServer]]:
    started: list[_ChatServer] = []

    def start(answer: Answer) -> _ChatServer:
        started.append(_ChatServer(answer))
        return started[-1]

    yield start
    for server in started:
        server.close()


def _run(args: list[str], lines: str, *, key: str | None = FAKE_KEY) -> subprocess.CompletedProcess[str]:
    env = {name: value for name, value in os.environ.items() if not name.startswith("AGNES_")}
    env.update(PYTHONPATH=str(ROOT), PYTHONIOENCODING="utf-8")
    if key is not None:
        env["AGNES_API_KEY"] = key
    return subprocess.run(
        [sys.executable, "-m", "lab", *args],
        input=lines,
        capture_output=True,
        text=True,
        encoding="utf-8",
        cwd=ROOT,
        env=env,
        timeout=10,
        check=False,
    )


def _main(args: list[str], lines: str = "", environ: dict[str, str] | None = None) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main(args, stdin=io.StringIO(lines), stdout=out, stderr=err, environ=environ or {})
    return code, out.getvalue(), err.getvalue()


def _banner(out: str) -> list[str]:
    """The start lines, which end at the first blank line."""
    return out.split("\n\n", 1)[0].splitlines()


def _answers(out: str) -> list[str]:
    """The lines printed after the start lines, one or more per question."""
    return out.split("\n\n", 1)[1].splitlines()


class TestOffline:
    def test_start_lines_say_offline_in_process_and_exit(self) -> None:
        """The start lines say offline, that memory is in-process and gone on restart, and that exit ends."""
        code, out, _ = _main(["chat"], "exit\n")
        banner = "\n".join(_banner(out))
        assert code == 0 and _answers(out) == []
        assert banner.startswith("Offline chat")
        assert "in-process only" in banner and "gone on restart" in banner and "Type exit" in banner

    def test_answers_each_line_until_exit(self) -> None:
        """Each line gets the canned answer; lines after exit are not read."""
        code, out, err = _main(["chat"], "hello\n你好\nexit\nnever\n")
        assert code == 0 and err == ""
        assert _answers(out) == ["(offline) you asked: hello", "(offline) you asked: 你好"]

    def test_end_of_input_ends_cleanly(self) -> None:
        """EOF ends the console with exit code 0."""
        assert _main(["chat"], "hello\n")[0] == 0

    @pytest.mark.parametrize("session", ["transactional", "versioned"])
    def test_failures_show_their_kind(self, session: str) -> None:
        """A played failure prints its kind and that nothing was committed; the next question still works."""
        _, out, _ = _main(["chat", "--session", session], "!timeout\n!http_429\n!parse\n!io\nok\n")
        lines = _answers(out)
        wrapped = next(n for n, line in enumerate(lines) if line.startswith("[HTTP_429]"))  # the timeout's lines
        assert " ".join(lines[:wrapped]).startswith("[TIMEOUT] nothing was committed; the service may have processed")
        assert lines[wrapped : wrapped + 3] == [
            f"[{kind}] nothing was committed" for kind in ("HTTP_429", "PARSE", "IO")
        ]
        assert lines[wrapped + 3] == "(offline) you asked: ok"
        assert max(len(line) for line in lines) <= 80

    def test_an_incomplete_reply_is_shown_per_session(self) -> None:
        """A length reply is INCOMPLETE in the transactional session and INVALID in the versioned one."""
        _, transactional, _ = _main(["chat"], "!length\n")
        _, versioned, _ = _main(["chat", "--session", "versioned"], "!length\n")
        assert _answers(transactional) == ["[INCOMPLETE] finish_reason='length'; nothing was committed"]
        assert _answers(versioned)[0].startswith("[INVALID]")

    def test_a_blank_line_sends_nothing(self) -> None:
        """A blank question is refused before any request, in both sessions."""
        for session in ("transactional", "versioned"):
            _, out, _ = _main(["chat", "--session", session], "   \n")
            assert _answers(out) == ["[EMPTY_QUESTION] the question is blank; nothing was sent"]

    def test_undecodable_bytes_are_not_sent(self) -> None:
        """A line holding surrogate-escaped bytes is refused and the console goes on."""
        _, out, _ = _main(["chat"], "a\udcff\nb\n")
        assert _answers(out) == [
            "[NOT_TEXT] the line holds bytes that are not text; nothing was sent",
            "(offline) you asked: b",
        ]

    @pytest.mark.slow
    @pytest.mark.timeout(15)
    def test_python_dash_m_lab_runs_offline(self) -> None:
        """`python -m lab chat` answers from stdin in a subprocess with no key and no network."""
        result = _run(["chat"], "hello\nexit\n", key=None)
        assert result.returncode == 0 and result.stderr == ""
        assert _answers(result.stdout) == ["(offline) you asked: hello"]


class TestArguments:
    @pytest.mark.parametrize(
        ("args", "environ", "needle"),
        [
            (["chat", "--live", "--base-url", "http://127.0.0.1:9/v1"], {}, "AGNES_API_KEY"),
            (["chat", "--live", "--base-url", "http://127.0.0.1:9/v1"], {"AGNES_API_KEY": " \n"}, "AGNES_API_KEY"),
            (["chat", "--live"], {"AGNES_API_KEY": FAKE_KEY}, "AGNES_BASE_URL"),
            (["chat", "--live", "--base-url", "ftp://127.0.0.1/v1"], {"AGNES_API_KEY": FAKE_KEY}, "http://"),
            (["chat", "--base-url", "http://127.0.0.1:9/v1"], {}, "--live"),
            (["chat", "--session", "optimistic"], {}, "invalid choice"),
            (["chat", "--live", "--deadline", "0"], {}, "--deadline"),
            (["chat", "--sesion", "versioned"], {}, "unrecognized"),
            (["chat", "chat"], {}, "unrecognized arguments: chat"),
        ],
        ids=[
            "no-key",
            "blank-key",
            "no-base-url",
            "bad-scheme",
            "base-url-offline",
            "bad-session",
            "bad-deadline",
            "typo",
            "chat-twice",
        ],
    )
    def test_a_mistake_is_one_line_and_exit_2(self, args: list[str], environ: dict[str, str], needle: str) -> None:
        """A usage mistake prints exactly one line on stderr, nothing on stdout, and exits 2."""
        code, out, err = _main(args, "hello\n", environ)
        assert code == 2 and out == ""
        assert len(err.splitlines()) == 1 and needle in err
        assert FAKE_KEY not in err

    @pytest.mark.slow
    @pytest.mark.timeout(15)
    def test_live_without_the_key_in_a_subprocess(self) -> None:
        """`--live` with no AGNES_API_KEY exits 2 with one line and no traceback."""
        result = _run(["chat", "--live", "--base-url", "http://127.0.0.1:9/v1"], "hello\n", key=None)
        assert result.returncode == 2 and result.stdout == ""
        assert len(result.stderr.splitlines()) == 1 and "AGNES_API_KEY" in result.stderr


class TestLive:
    @pytest.mark.slow
    @pytest.mark.timeout(15)
    def test_answers_arrive_and_the_key_is_never_printed(self, chat_server: Callable[[Answer], _ChatServer]) -> None:
        """Live answers are printed, the second request carries the first pair, and the key is sent but never shown."""
        server = chat_server(_echo)
        result = _run(["chat", "--live", "--base-url", server.url], "first?\nsecond?\nexit\n")
        assert result.returncode == 0 and result.stderr == ""
        assert _answers(result.stdout) == [
            "live answer to 'first?' after 2 messages",
            "live answer to 'second?' after 4 messages",
        ]
        assert server.authorizations == [f"Bearer {FAKE_KEY}"] * 2
        assert FAKE_KEY not in result.stdout + result.stderr

    @pytest.mark.slow
    @pytest.mark.timeout(15)
    def test_an_error_body_is_never_printed(self, chat_server: Callable[[Answer], _ChatServer]) -> None:
        """A 500 shows its kind and code only; its body's secret and the key appear in no output."""
        server = chat_server(_fail_second)
        result = _run(["chat", "--live", "--base-url", server.url], "first?\nsecond?\nexit\n")
        assert result.returncode == 0
        assert _answers(result.stdout)[1] == "[HTTP_STATUS (500)] nothing was committed"
        everything = result.stdout + result.stderr
        assert SECRET not in everything and FAKE_KEY not in everything

    @pytest.mark.timeout(15)
    def test_base_url_from_the_environment(self, chat_server: Callable[[Answer], _ChatServer]) -> None:
        """Without --base-url the console uses AGNES_BASE_URL."""
        server = chat_server(_echo)
        out = io.StringIO()
        code = main(
            ["chat", "--live"],
            stdin=io.StringIO("hi\n"),
            stdout=out,
            stderr=io.StringIO(),
            environ={"AGNES_API_KEY": FAKE_KEY, "AGNES_BASE_URL": server.url},
        )
        assert code == 0 and _answers(out.getvalue()) == ["live answer to 'hi' after 2 messages"]

    @pytest.mark.slow
    @pytest.mark.timeout(15)
    def test_versioned_session_live(self, chat_server: Callable[[Answer], _ChatServer]) -> None:
        """The versioned console sends what a transactional chat would send for the same history, and commits."""
        server = chat_server(_echo)
        result = _run(["chat", "--session", "versioned", "--live", "--base-url", server.url], "first?\nsecond?\n")
        assert result.returncode == 0 and result.stderr == ""
        assert "versioned session" in _banner(result.stdout)[0]
        assert _answers(result.stdout) == [
            "live answer to 'first?' after 2 messages",
            "live answer to 'second?' after 4 messages",
        ]
        history = [Message(Role.USER, "first?"), Message(Role.ASSISTANT, "live answer to 'first?' after 2 messages")]
        expected = TransactionalChat(_Echo()).build_request([*history, Message(Role.USER, "second?")])
        assert server.bodies[1] == expected.body
        assert FAKE_KEY not in result.stdout + result.stderr


class TestStartLines:
    def test_offline_lists_every_command_that_plays_an_outcome(self) -> None:
        """Offline, the start lines name each !command, and each of them plays an outcome rather than an echo."""
        _, out, _ = _main(["chat"], "".join(f"{command}\n" for command in OFFLINE_COMMANDS))
        listed = next(line for line in _banner(out) if line.startswith("Offline commands:"))
        assert listed.split()[2:] == list(OFFLINE_COMMANDS)
        assert not any("you asked" in line for line in _answers(out))

    @pytest.mark.timeout(15)
    def test_live_lists_no_offline_commands(self, chat_server: Callable[[Answer], _ChatServer]) -> None:
        """Live, a !command is just a question, so the start lines do not offer them."""
        server = chat_server(_echo)
        code, out, _ = _main(["chat", "--live", "--base-url", server.url], "", {"AGNES_API_KEY": FAKE_KEY})
        assert code == 0 and _banner(out)[0].startswith("Live chat with")
        assert "gone on restart" in "\n".join(_banner(out)) and "!timeout" not in out

    @pytest.mark.parametrize("session", ["transactional", "versioned"])
    def test_start_lines_fit_80_columns(self, session: str) -> None:
        """Every start line fits an 80-column terminal."""
        _, out, _ = _main(["chat", "--session", session])
        assert _banner(out) and max(len(line) for line in _banner(out)) <= 80

    def test_the_leading_chat_is_optional(self) -> None:
        """main() takes the options after `chat`, with or without the word itself."""
        assert _main(["--session", "versioned"], "hi\n") == _main(["chat", "--session", "versioned"], "hi\n")


class TestControlCharacters:
    @pytest.mark.timeout(15)
    def test_an_answer_cannot_drive_the_terminal(self, chat_server: Callable[[Answer], _ChatServer]) -> None:
        """Escape sequences, C0 and C1 controls and a bidi override in an answer print as visible escapes."""
        hostile = "clear\x1b[2J bell\x07 csi\x9b1m back\rover \u202eevil\r\nnext\tline"
        server = chat_server(lambda messages: (200, _completion(hostile)))
        code, out, _ = _main(["chat", "--live", "--base-url", server.url], "hi\n", {"AGNES_API_KEY": FAKE_KEY})
        assert code == 0
        assert _answers(out) == ["clear\\x1b[2J bell\\x07 csi\\x9b1m back\\x0dover \\u202eevil", "next\tline"]
        assert not [char for char in out if unicodedata.category(char) == "Cc" and char not in "\n\t"]

    @pytest.mark.parametrize("typed", ["\x1b[A", "hello\x1b[D\x1b[Dx", "\x7f", "a\x00b"])
    def test_a_typed_control_character_is_refused(self, typed: str) -> None:
        """A line holding an arrow key's escape code (no line editing) or another control is not sent."""
        code, out, _ = _main(["chat", "--session", "versioned"], f"{typed}\nnext\n")
        assert code == 0
        assert _answers(out) == [
            "[CONTROL] the line holds control characters (an arrow key?); nothing was sent",
            "(offline) you asked: next",
        ]

    def test_a_tab_and_a_crlf_line_end_are_fine(self) -> None:
        """A tab is part of a question; a Windows line end is not."""
        _, out, _ = _main(["chat"], "a\tb\r\n")
        assert _answers(out) == ["(offline) you asked: a\tb"]

    def test_an_error_line_shows_controls_visibly(self) -> None:
        """A usage error quoting a typed value prints its control characters as escapes."""
        code, out, err = _main(["chat", "--store", "bogus\x1b[2J"])
        assert code == 2 and out == ""
        assert "\x1b" not in err and "\\x1b[2J" in err and len(err.splitlines()) == 1


class TestLineEditing:
    @pytest.mark.slow
    @pytest.mark.timeout(60)  # four prompts of up to 10 s each on a loaded machine, and the start
    def test_on_a_terminal_arrow_keys_edit_and_recall(self, tmp_path: Path) -> None:
        """On a real terminal with readline, left arrow edits the line and up arrow recalls the last question; no
        history file is written."""
        pytest.importorskip("readline")
        keys = b"helo\x1b[Dl\r\x1b[A\rexit\r"
        output = _in_a_terminal(["chat"], keys, home=tmp_path)
        assert output.count("(offline) you asked: hello") == 2, output
        assert "\\x1b" not in output and "[CONTROL]" not in output
        assert list(tmp_path.iterdir()) == []

    def test_history_is_the_chats_own_and_restored(self) -> None:
        """Inside the chat the history starts empty; afterwards the earlier history is back and the chat's is gone."""
        readline = pytest.importorskip("readline")
        if not hasattr(readline, "clear_history"):
            pytest.skip("this readline cannot clear its history")
        earlier = [readline.get_history_item(n) for n in range(1, readline.get_current_history_length() + 1)]
        readline.add_history("from before")
        try:
            with _line_editing():
                assert readline.get_current_history_length() == 0
                readline.add_history("a question")
            after = [readline.get_history_item(n) for n in range(1, readline.get_current_history_length() + 1)]
            assert after == [*earlier, "from before"]
        finally:
            readline.clear_history()
            for item in earlier:
                readline.add_history(item)


def _in_a_terminal(args: list[str], keys: bytes, *, home: Path) -> str:
    """Run `python -m lab` with a pseudo-terminal as its stdin and stdout, type ``keys``, return all it printed."""
    leader, follower = pty.openpty()
    env = {name: value for name, value in os.environ.items() if not name.startswith("AGNES_")}
    env.update(PYTHONPATH=str(ROOT), PYTHONIOENCODING="utf-8", TERM="xterm", HOME=str(home), INPUTRC="/dev/null")
    child = subprocess.Popen(
        [sys.executable, "-m", "lab", *args], stdin=follower, stdout=follower, stderr=follower, cwd=ROOT, env=env
    )
    os.close(follower)
    chunks: list[bytes] = []
    try:
        for key in keys.split(b"\r"):
            if key or chunks:
                _read_until(leader, chunks, b"> ")
            os.write(leader, key + b"\r")
        _read_until(leader, chunks, None)
        child.wait(timeout=10)
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
        os.close(leader)
    return b"".join(chunks).decode("utf-8", "replace")


def _read_until(fd: int, chunks: list[bytes], prompt: bytes | None) -> None:
    """Read the terminal until ``prompt`` appears once more than before, or until it closes (``None``)."""
    seen = b"".join(chunks).count(prompt) if prompt else 0
    while prompt is None or b"".join(chunks).count(prompt) <= seen:
        if not select.select([fd], [], [], 10)[0]:
            raise AssertionError(f"the console printed no prompt within 10 s: {b''.join(chunks)!r}")
        try:
            chunk = os.read(fd, 4096)
        except OSError:  # the child closed the terminal
            return
        if not chunk:
            return
        chunks.append(chunk)


class TestVersionedAsker:
    def test_request_matches_the_transactional_one(self) -> None:
        """Ticket.to_request builds the same bytes as TransactionalChat.build_request for the same history."""
        session = VersionedSession("s")
        ticket = session.begin("r1", "Q?")
        chat = TransactionalChat(_Echo())
        assert ticket.to_request().body == chat.build_request([Message(Role.USER, "Q?")]).body

    def test_stale_is_shown_and_not_re_requested(self) -> None:
        """An answer built on an old version prints STALE as 'updated meanwhile' after exactly one request."""
        session = VersionedSession("s")
        sent: list[ChatRequest] = []

        class Overtaken:
            def send(self, request: ChatRequest) -> Reply:
                sent.append(request)
                rival = session.begin("rival", "faster question")
                session.commit(rival, "faster answer", "stop")
                return Reply("slow answer", "stop")

        line = versioned_asker(session, Overtaken())("slow question")
        assert line.startswith("[STALE] the session was updated meanwhile")
        assert len(sent) == 1
        assert [m.content for m in session.snapshot()[1]] == ["faster question", "faster answer"]

    def test_request_ids_count_up(self) -> None:
        """Each sent question takes the next request id r1, r2, ..."""
        session = VersionedSession("s")
        ask = versioned_asker(session, _Echo())
        ask("a")
        ask("b")
        assert session.receipt_ids == ("r1", "r2")


class _Echo:
    def send(self, request: ChatRequest) -> Reply:
        return Reply(f"echo {request.question}", "stop")
