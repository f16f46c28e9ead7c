"""The chat console in a real pseudo-terminal 40 columns wide: wrapping between words, /history, Ctrl-D."""

from __future__ import annotations

import fcntl
import os
import pty
import select
import struct
import subprocess
import sys
import termios
import unicodedata
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
WIDTH = 40
QUESTION = "the quick brown fox jumps over the lazy dog and then keeps running far away"
CHINESE = "你好世界" * 8


def _cells(text: str) -> int:
    return sum(2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in text)


def _in_a_terminal(args: list[str], typed: list[bytes], home: Path) -> tuple[int, str]:
    """Run `python -m lab chat` on a 40-column pseudo-terminal, type each of ``typed`` after a prompt."""
    leader, follower = pty.openpty()
    fcntl.ioctl(follower, termios.TIOCSWINSZ, struct.pack("HHHH", 24, WIDTH, 0, 0))
    env = {k: v for k, v in os.environ.items() if not k.startswith("AGNES_") and k not in ("COLUMNS", "LINES")}
    env.update(PYTHONPATH=str(ROOT), PYTHONIOENCODING="utf-8", TERM="dumb", HOME=str(home), INPUTRC="/dev/null")
    child = subprocess.Popen(
        [sys.executable, "-m", "lab", "chat", *args],
        stdin=follower,
        stdout=follower,
        stderr=follower,
        cwd=ROOT,
        env=env,
    )
    os.close(follower)
    seen = bytearray()
    try:
        for keys in typed:
            _read_until_prompt(leader, seen)
            os.write(leader, keys)
        while True:  # until the child closes the terminal
            if not select.select([leader], [], [], 10)[0]:
                raise AssertionError(f"the console did not end within 10 s: {bytes(seen)!r}")
            try:
                chunk = os.read(leader, 4096)
            except OSError:
                break
            if not chunk:
                break
            seen += chunk
        code = child.wait(timeout=10)
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
        os.close(leader)
    return code, seen.decode("utf-8", "replace")


def _read_until_prompt(fd: int, seen: bytearray) -> None:
    prompts = seen.count(b"> ")
    while seen.count(b"> ") <= prompts:
        if not select.select([fd], [], [], 10)[0]:
            raise AssertionError(f"no prompt within 10 s: {bytes(seen)!r}")
        seen += os.read(fd, 4096)


def _printed(output: str) -> list[str]:
    """The console's own lines: the terminal's, less the prompt lines that echo what was typed."""
    lines = output.replace("\r\n", "\n").split("\n")
    return [line for line in lines if not line.startswith("> ")]


@pytest.mark.slow
@pytest.mark.timeout(60)
@pytest.mark.parametrize("stream", [False, True], ids=["whole", "streamed"])
def test_answers_wrap_between_words_history_shows_and_ctrl_d_ends_the_line(tmp_path: Path, stream: bool) -> None:
    pytest.importorskip("readline")
    args = ["--stream"] if stream else []
    typed = [QUESTION.encode() + b"\r", CHINESE.encode() + b"\r", b"/history\r", b"\x04"]
    code, output = _in_a_terminal(args, typed, tmp_path)
    assert code == 0, output
    printed = _printed(output)
    assert all(_cells(line) <= WIDTH for line in printed), printed  # the start lines too
    start = next(n for n, line in enumerate(printed) if line.startswith("(offline) you asked: the quick"))
    answer: list[str] = []
    for line in printed[start:]:
        answer.append(line)
        if line.endswith("away"):
            break
    assert " ".join(answer) == f"(offline) you asked: {QUESTION}"  # every word whole, none split
    assert len(answer) > 1 and all(len(line) <= WIDTH and not line.endswith(" ") for line in answer)
    before_history = printed[: printed.index("History: 2 pairs kept, oldest first")]
    chinese = [line for line in before_history if line and set(line) <= set("你好世界(offline) yuaskd:")]
    assert "".join(chinese).replace("(offline) you asked: ", "") == CHINESE
    assert "History: 2 pairs kept, oldest first" in printed
    history = printed[printed.index("History: 2 pairs kept, oldest first") :]
    assert history[1] == "you: the quick brown fox jumps over the"
    assert history[2].startswith("  lazy dog")  # a continuation is indented under its speaker
    assert output.endswith("> \r\n"), repr(output[-40:])  # Ctrl-D: the prompt's line is ended
