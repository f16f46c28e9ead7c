"""`lab chat --live --stream` against a loopback server that streams server-sent events; /history, /reconcile."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from lab.console import main
from tests.test_stream_http import DONE, Handler, _Server, _Sse, event, stalls_after, streams

ROOT = Path(__file__).resolve().parent.parent
FAKE_KEY = "sk-fake-console-stream-77aa-never-print-me"


@pytest.fixture
def serve() -> Iterator[Callable[..., _Server]]:
    started: list[_Server] = []

    def start(*handlers: Handler) -> _Server:
        server = _Server(handlers)
        started.append(server)
        return server

    yield start
    for server in started:
        server.stop.set()
        server.shutdown()
        server.server_close()


def _chat(args: list[str], lines: str, environ: dict[str, str] | None = None) -> tuple[int, list[str], str]:
    out, err = io.StringIO(), io.StringIO()
    env = {"AGNES_API_KEY": FAKE_KEY, **(environ or {})}
    code = main(["chat", *args], stdin=io.StringIO(lines), stdout=out, stderr=err, environ=env)
    text = out.getvalue()
    assert FAKE_KEY not in text + err.getvalue() and "Traceback" not in text + err.getvalue()
    return code, text.split("\n\n", 1)[1].splitlines(), err.getvalue()


def _live(server: _Server, *more: str) -> list[str]:
    return ["--live", "--stream", "--base-url", server.url, *more]


def _questions(server: _Server) -> list[list[str]]:
    return [[m["content"] for m in body["messages"] if m["role"] != "system"] for body in server.bodies()]


class TestLiveStreaming:
    @pytest.mark.timeout(15)
    def test_a_finished_stream_is_shown_committed_and_carried(self, serve: Callable[..., _Server]) -> None:
        server = serve(streams(event("Paris "), event("is the "), event("capital", "stop"), DONE))
        code, lines, err = _chat(_live(server), "capital of France?\nand Italy?\n")
        assert code == 0 and err == ""
        assert lines == ["Paris is the capital", "Paris is the capital"]
        bodies = server.bodies()
        assert all(body["stream"] is True for body in bodies) and len(bodies) == 2
        assert _questions(server)[1] == ["capital of France?", "Paris is the capital", "and Italy?"]

    @pytest.mark.timeout(15)
    @pytest.mark.parametrize(
        ("failing", "shown", "status"),
        [
            pytest.param(streams(event("half an "), event("answer ")), "half an answer", "[IO]", id="cut"),
            pytest.param(
                streams(*[event("x" * 30_000)] * 10, DONE), None, "[IO]", id="past-256KiB", marks=pytest.mark.slow
            ),
            pytest.param(
                streams(event("cut "), event("short ", "length"), DONE), "cut short", "[INCOMPLETE]", id="length"
            ),
        ],
    )
    def test_a_stream_that_did_not_end_well_commits_nothing(
        self, serve: Callable[..., _Server], failing: Handler, shown: str | None, status: str
    ) -> None:
        server = serve(failing, streams(event("fine", "stop"), DONE))
        code, lines, _ = _chat(_live(server), "doomed question\nnext question\n/history\n")
        assert code == 0
        failed = [line for line in lines if line.startswith(status)]
        assert failed and "nothing was committed" in " ".join(lines)
        if shown is not None:
            assert lines[0] == shown  # what streamed was shown, then said not to be kept
        assert _questions(server)[1] == ["next question"]  # the failed question is not carried
        assert len(server.received) == 2  # no automatic retry
        assert lines[-3:] == ["History: 1 pair kept, oldest first", "you: next question", "model: fine"]

    @pytest.mark.slow
    @pytest.mark.timeout(30)
    def test_a_stalled_stream_with_deadline_3_ends_within_seconds_in_one_line(
        self, serve: Callable[..., _Server]
    ) -> None:
        """In a subprocess, as a user runs it: one line, no traceback, no key, well within the read timeout."""
        server = serve(stalls_after())
        env = {name: value for name, value in os.environ.items() if not name.startswith(("AGNES_", "COLUMNS"))}
        env.update(PYTHONPATH=str(ROOT), PYTHONIOENCODING="utf-8", AGNES_API_KEY=FAKE_KEY)
        started = time.monotonic()
        result = subprocess.run(
            [sys.executable, "-m", "lab", "chat", *_live(server, "--deadline", "3")],
            input="are you there?\n",
            capture_output=True,
            text=True,
            env=env,
            cwd=ROOT,
            timeout=25,
            check=False,
        )
        elapsed = time.monotonic() - started
        assert result.returncode == 0 and result.stderr == ""
        banner, answers = result.stdout.split("\n\n", 1)
        assert "3 s in all" in banner and "stream as they arrive, committed only once" in banner
        assert answers.splitlines() == ["[TIMEOUT] nothing was committed; the service may have processed and billed it"]
        assert 2.5 < elapsed < 20  # the deadline, not the 90 s read timeout; generous for a loaded machine
        assert FAKE_KEY not in result.stdout + result.stderr and len(server.received) == 1
        assert server.hung_up.wait(5)

    @pytest.mark.timeout(15)
    def test_a_versioned_timeout_is_reconciled_through_the_lookup(self, serve: Callable[..., _Server]) -> None:
        def serve_both(h: _Sse) -> None:
            if h.command == "GET":
                h.start("application/json")
                h.write(json.dumps({"choices": [{"message": {"content": "late"}, "finish_reason": "stop"}]}).encode())
            else:
                stalls_after(event("lat"))(h)

        server = serve(serve_both)
        args = [*_live(server, "--deadline", "0.3", "--lookup-path", "/requests"), "--session", "versioned"]
        code, lines, _ = _chat(args, "slow one\n/reconcile\n/reconcile\n/history\n", {"COLUMNS": "200"})
        assert code == 0
        assert lines[0] == "lat"
        assert lines[1].startswith("[TIMEOUT] nothing was committed") and "/reconcile asks the service" in lines[1]
        assert lines[2].startswith("[COMMITTED] r1: the service had finished it")
        assert lines[3] == "[RECONCILE] no request has an unknown outcome"
        assert lines[4:] == ["History: 1 pair kept, oldest first", "you: slow one", "model: late"]
        assert [method for method, *_ in server.received] == ["POST", "GET"]  # a lookup, never a second request
        assert server.received[0][2]["Idempotency-Key"] == "r1"


class TestOfflineStreaming:
    def test_offline_streams_and_cut_commits_nothing(self) -> None:
        code, lines, _ = _chat(["--stream"], "hello there\n!cut\n/history\n")
        assert code == 0
        assert lines[0] == "(offline) you asked: hello there"
        assert lines[1] == "(offline) an answer cut off mid-"
        assert lines[2] == "[IO] nothing was committed"
        assert lines[3:] == [
            "History: 1 pair kept, oldest first",
            "you: hello there",
            "model: (offline) you asked: hello there",
        ]

    def test_the_banner_says_streaming_and_offers_cut(self) -> None:
        out = io.StringIO()
        main(["chat", "--stream"], stdin=io.StringIO(""), stdout=out, stderr=io.StringIO(), environ={})
        banner = out.getvalue().split("\n\n")[0].splitlines()
        assert any("stream as they arrive, committed only once" in line for line in banner)
        assert any(line.startswith("Offline commands:") and line.endswith("!cut") for line in banner)
        assert max(map(len, banner)) <= 80

    def test_deadline_and_lookup_need_live(self) -> None:
        for option in (["--deadline", "3"], ["--lookup-path", "/r"]):
            err = io.StringIO()
            assert main(["chat", *option], stdin=io.StringIO(""), stdout=io.StringIO(), stderr=err, environ={}) == 2
            assert len(err.getvalue().splitlines()) == 1 and "--live" in err.getvalue()

    def test_a_ctrl_c_while_asking_cancels_and_the_console_goes_on(self) -> None:
        class Interrupting(io.StringIO):
            """Raises KeyboardInterrupt on the first streamed piece written, as a Ctrl-C would arrive."""

            armed = True

            def write(self, text: str) -> int:
                if self.armed and text == "(offline)":
                    self.armed = False
                    raise KeyboardInterrupt
                return super().write(text)

        for session in ("transactional", "versioned"):
            out = Interrupting()
            code = main(
                ["chat", "--stream", "--session", session],
                stdin=io.StringIO("first\nsecond\n/history\n"),
                stdout=out,
                stderr=io.StringIO(),
                environ={"COLUMNS": "200"},
            )
            lines = out.getvalue().split("\n\n", 1)[1].splitlines()
            assert code == 0
            assert lines[0] == "(offline)"  # what had arrived is shown, then said not to be kept
            assert lines[1].startswith("[CANCELLED] nothing was committed; the service may have processed")
            assert lines[2] == "(offline) you asked: second"
            assert lines[3:] == [
                "History: 1 pair kept, oldest first",
                "you: second",
                "model: (offline) you asked: second",
            ]

    def test_reconcile_offline_says_unknown_stays_unknown(self) -> None:
        _, lines, _ = _chat(["--session", "versioned"], "!timeout\n/reconcile\n", {"COLUMNS": "200"})
        assert "no record to ask" in lines[0]
        assert lines[1].startswith("[UNKNOWN] r1: this service keeps no record")

    def test_reconcile_in_a_transactional_session(self) -> None:
        _, lines, _ = _chat([], "/reconcile\n/history\n", {"COLUMNS": "200"})
        assert lines[0].startswith("[RECONCILE] only a versioned session")
        assert lines[1] == "(the history is empty: nothing has been committed)"
