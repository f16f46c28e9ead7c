"""What every command shares: a parser whose mistakes are one line, the two output streams, and shared flags."""

from __future__ import annotations

import argparse
import os
import sys
from dataclasses import dataclass, field
from pathlib import Path

from rich.console import Console
from rich.text import Text

from lab.campaign import DEFAULT_WATCHDOG, WATCHDOG_RANGE
from lab.errors import UsageError
from lab.evidence.records.safefs import printable
from lab.render import Hanging

PIPE_WIDTH = 80
"""The width of output that goes to a pipe or a file when ``COLUMNS`` does not say (rich's own default, stated)."""


class Parser(argparse.ArgumentParser):
    """argparse, but a usage error is a :class:`UsageError` (one line, exit code 2), never argparse's two lines."""

    def error(self, message: str) -> None:  # type: ignore[override]
        raise UsageError(message)


def a_path(text: str) -> Path:
    """A path argument; an empty one is refused: ``Path("")`` is the current folder, which nobody wrote."""
    if not text:
        raise argparse.ArgumentTypeError("an empty path names no file or folder (write . for the current folder)")
    return Path(text)


class PipeConsole(Console):
    """rich's console, but a reader that goes away (``| head``) is a :class:`BrokenPipeError` for the command to
    end on with 141, as :mod:`lab.cli.app` intends; rich's own answer is ``SystemExit(1)``, which said "problems
    found" of a passing audit."""

    def on_broken_pipe(self) -> None:
        self.quiet = True
        raise BrokenPipeError


def console() -> Console:
    """The standard output console: a terminal's width, or in a pipe ``COLUMNS`` (when set) else
    :data:`PIPE_WIDTH`."""
    if sys.stdout.isatty():
        return PipeConsole()
    columns = os.environ.get("COLUMNS", "")
    return PipeConsole(width=int(columns) if columns.isdigit() and int(columns) > 0 else PIPE_WIDTH)


@dataclass
class Output:
    """Where a command writes: results on ``out``; one-line errors on standard error; progress as a live display
    on standard error when it is a terminal (``live``), else as one line per finished item on ``out``."""

    out: Console
    prog: str
    err: Console = field(default_factory=lambda: PipeConsole(stderr=True))

    @property
    def live(self) -> bool:
        """A live progress display is shown: standard error is a terminal."""
        return self.err.is_terminal

    def line(self, text: str) -> None:
        """One plain line (no markup, no highlighting), wrapped between words at the console's width, its
        continuation lines indented."""
        self.out.print(Hanging(Text(text)))

    def fail(self, text: str) -> None:
        """A one-line error on standard error, named after the command; nothing in it reaches the terminal raw."""
        print(f"{self.prog}: {printable(text)}", file=sys.stderr)


def add_scenarios(parser: argparse.ArgumentParser) -> None:
    """``--scenarios DIR``: the folder of scenario files (default: the checkout's, or ``./scenarios``)."""
    parser.add_argument(
        "--scenarios",
        type=a_path,
        metavar="DIR",
        help="the folder of scenario files (default: the checkout's scenarios/, or ./scenarios with an installed lab)",
    )


def add_watchdog(parser: argparse.ArgumentParser) -> None:
    """``--watchdog SECONDS``."""
    parser.add_argument(
        "--watchdog",
        type=float,
        metavar="SECONDS",
        help="how long an actor may block outside the lab before it is reported, "
        f"{WATCHDOG_RANGE[0]:g} to {WATCHDOG_RANGE[1]:g} (default {DEFAULT_WATCHDOG:g})",
    )


def add_granularity(parser: argparse.ArgumentParser, *, both: bool) -> None:
    """``--granularity``: one of the engine's, or (to explore) ``both``: probe and line."""
    choices = ("probe", "line", "instruction", "both") if both else ("probe", "line", "instruction")
    parser.add_argument(
        "--granularity",
        choices=choices,
        help="scheduling points are the lab's primitives and probes, every line, or every access to shared "
        "state (default probe" + ("; both = probe and line)" if both else ")"),
    )
