"""What every command shares: the two output streams; the parser whose mistakes are one line, and the shared
flags, come from the one grammar (:mod:`lab.commandline`) and are named here too."""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass, field

from rich.console import Console
from rich.text import Text

from lab.commandline import Parser, a_path, add_granularity, add_scenarios, add_watchdog
from lab.evidence.records.safefs import printable
from lab.render import Hanging

PIPE_WIDTH = 80
"""The width of output that goes to a pipe or a file when ``COLUMNS`` does not say (rich's own default, stated)."""


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


__all__ = [
    "PIPE_WIDTH",
    "Output",
    "Parser",
    "PipeConsole",
    "a_path",
    "add_granularity",
    "add_scenarios",
    "add_watchdog",
    "console",
]
