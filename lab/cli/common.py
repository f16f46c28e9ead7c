"""What every command shares: the two output streams; the parser whose mistakes are one line, and the shared
flags, come from the one grammar (:mod:`lab.commandline`) and are named here too."""

from __future__ import annotations

import errno
import io
import os
import sys
from dataclasses import dataclass, field
from typing import IO, TextIO, cast

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


OUTPUT_ERRORS = frozenset({errno.ENOSPC, errno.EIO, errno.EFBIG, errno.EDQUOT, errno.EPIPE})
"""What writing the output can fail with (``> /dev/full``, ``| head``)."""


class GuardedStream(io.TextIOBase):
    """Standard output that never raises what writing it can fail with: the first such error is kept
    (:attr:`error`) and everything after it dropped, so a full disk or a reader gone away never stops the work
    (a run's evidence is finished all the same); the command reports the error once the work is done."""

    def __init__(self, stream: TextIO) -> None:
        self._stream = stream
        self.error: OSError | None = None

    def write(self, text: str) -> int:
        if self.error is None:
            try:
                self._stream.write(text)
            except OSError as error:
                self._fail(error)
        return len(text)

    def flush(self) -> None:
        if self.error is None:
            try:
                self._stream.flush()
            except OSError as error:
                self._fail(error)

    def _fail(self, error: OSError) -> None:
        if error.errno not in OUTPUT_ERRORS:
            raise error
        self.error = error

    def isatty(self) -> bool:
        return self._stream.isatty()

    def fileno(self) -> int:
        return self._stream.fileno()

    @property
    def encoding(self) -> str:  # type: ignore[override]
        return getattr(self._stream, "encoding", "utf-8")


def console() -> Console:
    """The standard output console: a terminal's width, or in a pipe ``COLUMNS`` (when set) else
    :data:`PIPE_WIDTH`; written through a :class:`GuardedStream`."""
    stream = GuardedStream(sys.stdout)
    if sys.stdout.isatty():
        return PipeConsole(file=cast(IO[str], stream))
    columns = os.environ.get("COLUMNS", "")
    return PipeConsole(
        file=cast(IO[str], stream), width=int(columns) if columns.isdigit() and int(columns) > 0 else PIPE_WIDTH
    )


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
        continuation lines indented; nothing in it reaches the terminal raw (a path with an escape code in it is
        shown escaped)."""
        self.out.print(Hanging(Text(printable(text))))

    def raise_unwritten(self) -> None:
        """Raise the error writing the output met while the work went on (:class:`GuardedStream`), if any: the
        command then ends on it, as it would have at once."""
        stream = self.out.file
        if isinstance(stream, GuardedStream) and stream.error is not None:
            raise stream.error

    def fail(self, text: str) -> None:
        """A one-line error on standard error, named after the command; nothing in it reaches the terminal raw."""
        print(f"{self.prog}: {printable(text)}", file=sys.stderr)


__all__ = [
    "OUTPUT_ERRORS",
    "PIPE_WIDTH",
    "GuardedStream",
    "Output",
    "Parser",
    "PipeConsole",
    "a_path",
    "add_granularity",
    "add_scenarios",
    "add_watchdog",
    "console",
]
