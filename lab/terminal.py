"""What the chat console reads from and writes to a terminal: no raw control characters, line editing if available,
and text wrapped at the terminal's width between words, never inside one (:class:`Wrapper`).

Questions come from a person and answers from a remote service; either can hold bytes a terminal obeys rather than
shows. An answer holding ``ESC [2J`` would clear the screen, one holding ``\\r`` or a right-to-left override could
make a line read as something it is not. So every line the console prints goes through :func:`visible`, which turns
each such character into a printable escape (``\\x1b[2J``), and a typed line holding one is refused rather than sent
(:func:`refusal`): on a terminal without line editing an arrow key arrives as ``ESC [ A``, and sending that as a
question helps nobody.

Line editing uses the standard library's :mod:`readline` when it can be imported (never required). Its history is the
chat's own and lives in memory only: nothing is read from or written to a history file, and whatever history the
process held before (an interactive Python session's) is put back afterwards, so questions never land in
``~/.python_history``.
"""

from __future__ import annotations

import contextlib
import os
import sys
import unicodedata
from collections.abc import Callable, Iterator, Mapping
from typing import TextIO

_KEPT = frozenset("\n\t")
"""The only control characters printed as they are: a newline ends a line, a tab only moves the cursor."""

_BIDI = frozenset("\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")
"""Directional marks, embeddings, overrides and isolates: not controls to Unicode, yet they reorder what is shown."""


def _escape(code: int) -> str:
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


_ESCAPES = {
    code: _escape(code)
    for code in (*range(0x20), *range(0x7F, 0xA0), *map(ord, _BIDI))  # C0, DEL and C1 controls; bidi controls
    if chr(code) not in _KEPT
}


def visible(text: str) -> str:
    """``text`` with every control character except newline and tab shown as an escape (``\\x1b``, ``\\u202e``).

    A CRLF line end counts as a newline, so an answer written with Windows line ends prints as plain lines; a lone
    carriage return, which would let the rest of a line overwrite its start, is shown as ``\\x0d``.

    >>> visible("ok\\x1b[2J\\r\\nnext\\tline\\rgone")
    'ok\\\\x1b[2J\\nnext\\tline\\\\x0dgone'
    """
    return text.replace("\r\n", "\n").translate(_ESCAPES)


def refusal(line: str) -> str | None:
    """Why a typed ``line`` (its line end removed) is not sent, in one printable line; ``None`` when it can be.

    Only a tab is let through: any other control character is either a key the terminal could not edit with (an
    arrow key is ``ESC [ A``) or pasted bytes no question needs.

    >>> refusal("what time is it?") is None
    True
    >>> refusal("\\x1b[A")
    '[CONTROL] the line holds control characters (an arrow key?); nothing was sent'
    """
    try:
        line.encode("utf-8")
    except UnicodeEncodeError:  # surrogate escapes: bytes the input's encoding could not decode
        return "[NOT_TEXT] the line holds bytes that are not text; nothing was sent"
    if any(ord(char) in _ESCAPES for char in line):
        return "[CONTROL] the line holds control characters (an arrow key?); nothing was sent"
    return None


@contextlib.contextmanager
def line_reader(source: TextIO, out: TextIO) -> Iterator[Callable[[], str]]:
    """For its duration, a function returning the next typed line, ``""`` at the end of the input.

    On the process's own terminal it reads through :func:`input`, with readline's line editing when Python has it
    (readline only works when both streams are that terminal). Any other stream (a pipe, a test's fake) is read line
    by line, with the prompt shown only when it is a terminal.
    """
    if source is sys.stdin and out is sys.stdout and source.isatty() and out.isatty():
        with _line_editing():
            yield _typed
        return
    prompt = source.isatty()

    def read() -> str:
        if prompt:
            print("> ", end="", file=out, flush=True)
        return source.readline()

    yield read


def _typed() -> str:
    try:
        return input("> ") + "\n"
    except EOFError:
        return ""


@contextlib.contextmanager
def _line_editing() -> Iterator[None]:
    """Readline for :func:`input`, with a history of the chat's own kept in memory only.

    The history is emptied on entry and the earlier one put back on exit, so the chat neither shows an earlier
    session's lines nor leaves its questions behind for anything that saves history to a file. Nothing here reads or
    writes a history file.
    """
    try:
        import readline
    except ImportError:  # not every Python has it (Windows, some minimal builds): plain input still works
        yield
        return
    keeps_history = hasattr(readline, "clear_history")
    earlier = [readline.get_history_item(n) for n in range(1, readline.get_current_history_length() + 1)]
    completer = readline.get_completer()
    readline.set_completer(lambda text, state: None)  # a tab completes nothing (not file names) in a question
    if keeps_history:
        readline.clear_history()
    try:
        yield
    finally:
        readline.set_completer(completer)
        if keeps_history:
            readline.clear_history()
            for item in earlier:
                if item is not None:
                    readline.add_history(item)


def say(out: TextIO, text: str, width: int, *, indent: int = 0) -> None:
    """Print ``text`` (made visible) wrapped at ``width``; continuation lines indented by ``indent``."""
    wrapper = Wrapper(out, width, indent=indent)
    wrapper.feed(visible(text))
    wrapper.end()


def terminal_width(out: TextIO, env: Mapping[str, str]) -> int:
    """The width to wrap at: ``COLUMNS`` when set, else the terminal's, else 80 (a pipe or a file)."""
    columns = env.get("COLUMNS", "")
    if columns.isdigit() and int(columns) > 0:
        return int(columns)
    try:
        if out.isatty():
            return max(os.get_terminal_size(out.fileno()).columns, 1)
    except (OSError, ValueError, AttributeError):
        pass
    return 80


class Wrapper:
    """Writes text as it arrives, broken into lines of at most ``width`` cells between words, never inside one.

    A word is held back until the space after it arrives (or :meth:`end`), so a streamed reply is never broken in
    the middle of a word it has not finished yet. East Asian wide characters count two cells and may be broken
    between (Chinese has no spaces); a word longer than a whole line is kept whole on a line of its own (the
    terminal shows it, cut nowhere by the console). Newlines in the text are kept; spaces at a break are dropped.

    >>> import io
    >>> out = io.StringIO()
    >>> wrapper = Wrapper(out, 12)
    >>> wrapper.feed("a streamed rep"); wrapper.feed("ly arrives")
    >>> wrapper.end()
    >>> out.getvalue()
    'a streamed\\nreply\\narrives\\n'
    """

    def __init__(self, out: TextIO, width: int, *, indent: int = 0) -> None:
        self._out = out
        self._width = max(width, 1)
        self._indent = indent if indent < width // 2 else 0
        self._column = 0
        self._word: list[str] = []
        self._word_cells = 0
        self._gap = ""
        self._dirty = False

    def feed(self, text: str) -> None:
        """Take the next piece of text; write every word it completes."""
        for char in text:
            if char == "\n":
                self._place()
                self._out.write("\n")
                self._column, self._gap, self._dirty = 0, "", False
            elif char in " \t":
                self._place()
                self._gap += char
            elif cells(char) == 2:
                self._place()
                self._word, self._word_cells = [char], 2
                self._place()
            else:
                self._word.append(char)
                self._word_cells += cells(char)
        self._out.flush()

    def end(self) -> None:
        """Write the last word and end the line, if anything is on it."""
        self._place()
        if self._dirty:
            self._out.write("\n")
        self._column, self._gap, self._dirty = 0, "", False
        self._out.flush()

    def _place(self) -> None:
        if not self._word:
            return
        gap = sum(8 - (self._column + n) % 8 if c == "\t" else 1 for n, c in enumerate(self._gap))
        if self._dirty and self._column + gap + self._word_cells > self._width:
            self._out.write("\n" + " " * self._indent)
            self._column = self._indent
        else:
            self._out.write(self._gap)
            self._column += gap
        self._out.write("".join(self._word))
        self._column += self._word_cells
        self._word, self._word_cells, self._gap, self._dirty = [], 0, "", True


def cells(char: str) -> int:
    """How many terminal cells ``char`` takes: two for East Asian wide and full-width, none for a combining mark."""
    if unicodedata.combining(char):
        return 0
    return 2 if unicodedata.east_asian_width(char) in ("W", "F") else 1
