"""The two shapes every summary takes: a table where it fits at its natural width, else one item per line, each
wrapped between words with its continuation lines indented."""

from __future__ import annotations

from collections.abc import Callable, Iterator

from rich.cells import cell_len
from rich.console import Console, ConsoleOptions, RenderableType
from rich.measure import Measurement
from rich.table import Table
from rich.text import Text


class Fitted:
    """A table where it fits at its natural width; otherwise the same facts one item per line."""

    def __init__(self, table: Callable[[], Table], lines: Callable[[], list[RenderableType]]) -> None:
        self._table = table
        self._lines = lines

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> Iterator[RenderableType]:
        table = self._table()
        natural = Measurement.get(console, options.update(max_width=100_000), table).maximum  # unsqueezed
        if natural <= options.max_width:
            yield table
            return
        title = table.title
        if title:
            yield Text(str(title), style="bold")
        yield from self._lines()


class Hanging:
    """Text wrapped between words at the width it is printed at, its first line indented by ``first`` columns and
    the others by ``rest``, with no trailing spaces (a padded line is noise in a log file)."""

    def __init__(self, text: Text, first: int = 0, rest: int = 4) -> None:
        self._text = text
        self._first = first
        self._rest = rest

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> Iterator[RenderableType]:
        if console.soft_wrap:  # the caller asked for no wrapping (a log reader wraps, or a test compares lines)
            yield Text.assemble(" " * self._first, self._text)
            return
        plain = self._text.plain
        if "\n" not in plain and "\t" not in plain and self._first + cell_len(plain) <= options.max_width:
            # It fits on its first line: what wrapping would yield, without wrapping (most lines, and wrapping
            # the whole text twice is most of printing one).
            line = self._text.copy()
            line.rstrip()
            yield Text.assemble(" " * self._first, line)
            return
        # The first line has its own indent, so it is wrapped at its own width; the rest at theirs.
        first = self._text.wrap(console, max(options.max_width - self._first, 20), overflow="fold")
        if not first:
            return
        head = first[0]
        head.rstrip()
        yield Text.assemble(" " * self._first, head)
        rest = self._text[len(head.plain) :]
        rest = rest[len(rest.plain) - len(rest.plain.lstrip(" ")) :]
        if not rest.plain:
            return
        for line in rest.wrap(console, max(options.max_width - self._rest, 20), overflow="fold"):
            line.rstrip()
            yield Text.assemble(" " * self._rest, line)


def indented(text: str | Text, style: str = "") -> Hanging:
    """A line indented by four columns, its continuation lines too."""
    return Hanging(text if isinstance(text, Text) else Text(text, style=style), first=4, rest=4)


def hanging(*parts: str | Text | tuple[str, str]) -> Hanging:
    """One item's line: continuation lines indented, so the names at the left margin stand out."""
    return Hanging(Text.assemble(*parts))


def verdict_text(word: str) -> Text:
    """A verdict word in its colour: PASS green, FAIL and ERROR red, anything else (INCOMPLETE) yellow."""
    return Text(word, style={"PASS": "green", "FAIL": "red", "ERROR": "red", "BROKEN": "red"}.get(word, "yellow"))
