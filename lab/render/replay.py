"""A replayed schedule as Lincheck prints one: a column per actor, or one event per line where that does not fit."""

from __future__ import annotations

import linecache
import sys
from collections.abc import Sequence
from pathlib import Path

from rich.console import RenderableType
from rich.table import Table
from rich.text import Text

from lab.engine.core import TraceEvent
from lab.render.fitting import Fitted, Hanging, indented
from lab.scenarios.runner import ScenarioResult


def replay_table(result: ScenarioResult, actors: Sequence[str], *, limit: int | None = None) -> Fitted:
    """The interleaving as Lincheck prints one: a column per actor, switches and waits named, state rows; where
    that does not fit, one event per line, each named by its step and actor.

    ``limit``: at most that many rows, the first two thirds and the last third, with one row saying how many
    were left out between them (a spinner's run of 6,000 steps is read at its start and its end)."""
    rows = _replay_rows(result, actors)
    if limit is not None and len(rows) > limit:
        head, tail = limit * 2 // 3, limit - limit * 2 // 3
        gap = ("", None, Text(f"... {len(rows) - head - tail} rows left out ...", style="dim"))
        rows = [*rows[:head], gap, *rows[len(rows) - tail :]]

    def lines() -> list[RenderableType]:
        shown: list[RenderableType] = []
        for step, actor, cell in rows:
            if actor is None:
                shown.append(indented(cell.plain, style=str(cell.style)))
            else:
                shown.append(Hanging(Text.assemble(f"{step:>4} ", (actor, "bold"), ": ", cell), rest=6))
        return shown

    return Fitted(lambda: _replay_grid(result.name, actors, rows), lines)


def _replay_rows(result: ScenarioResult, actors: Sequence[str]) -> list[tuple[str, str | None, Text]]:
    """(step, actor, cell) for every row of the replay: an actor of ``None`` is a state row, a switch has no step.

    The step is the run's step (one per scheduling decision, from 0), the number an explanation of racing steps
    says ("a's step 3"), shown on the first row of each step; a run without that record numbers its events."""
    rows: list[tuple[str, str | None, Text]] = []
    states = dict(result.state_rows)
    starts = _step_starts(result)
    files = _files_by_stem()  # once per table: a spinner's 6,000 rows each scanning sys.modules took 20 s
    previous: TraceEvent | None = None
    for event in result.trace:
        if (
            previous is not None
            and event.actor != previous.actor
            and previous.actor in actors
            and not (previous.op in {"end", "error", "lock.wait", "hold"} or previous.detail.get("blocked"))
        ):
            rows.append(("", previous.actor, Text("switch (preempted)", style="yellow")))
        previous = event
        number = starts.get(event.step, "") if starts else str(event.step)
        if event.actor not in actors:
            rows.append((number, event.actor, Text(event.describe(), style="bold")))
            continue
        rows.append((number, event.actor, _replay_cell(event, files)))
        if states.get(event.step):  # a state row only where there is state to show
            state = ", ".join(f"{k}={v}" for k, v in states[event.step].items())
            rows.append(("", None, Text(f"state: {state}", style="cyan")))
    return rows


def _step_starts(result: ScenarioResult) -> dict[int, str]:
    """The trace index each step begins at, mapped to the step's number (empty when the run kept no such record)."""
    run = result.run
    if run is None or not run.step_events:
        return {}
    starts: dict[int, str] = {}
    for number, index in enumerate(run.step_events):
        starts.setdefault(index, str(number))  # a step that logged nothing shares its index with the next: the first
    return starts


def _replay_grid(name: str, actors: Sequence[str], rows: list[tuple[str, str | None, Text]]) -> Table:
    table = Table(title=f"{name}: replay", expand=False, show_lines=False)
    table.add_column("#", justify="right", style="dim")
    for actor in actors:
        table.add_column(actor, overflow="fold")
    for step, who, cell in rows:
        cells: list[Text | str] = ["" for _ in actors]
        column = list(actors).index(who) if who is not None and who in actors else None
        cells[column or 0] = cell  # a state row, or the lab's own event: the first column
        table.add_row(step, *cells)
    return table


def _replay_cell(event: TraceEvent, files: dict[str, set[str]]) -> Text:
    detail = event.detail
    if detail.get("blocked") or event.op in {"lock.wait", "hold"}:
        waits = detail.get("until") or event.obj
        return Text(f"switch (waiting on {waits})", style="yellow")
    if event.op == "end":
        return Text(f"-> {detail.get('outcome')}", style="bold green")
    if event.op == "note":
        return Text(str(detail.get("text", "")), style="italic")
    if event.op == "probe":
        return Text(f"{event.obj} {detail.get('point')}", style="dim")
    if event.op == "line":
        return Text(_source_line(event.obj, detail.get("line"), files))
    return Text(event.describe())


def _source_line(module: str, line: object, files: dict[str, set[str]]) -> str:
    """A line event as the person wrote it: ``bank.py:6  b = self.balance`` (the trace keeps the module's name and
    the number; the text is looked up only to show it, from the module as loaded in this process)."""
    found = files.get(module, set())
    filename = next(iter(found)) if len(found) == 1 else ""  # none or several: the label is shown as it is
    text = linecache.getline(filename, line).strip() if filename and isinstance(line, int) else ""
    where = f"{Path(filename).name if filename else module}:{line}"
    return f"{where}  {text}" if text else where


def _files_by_stem() -> dict[str, set[str]]:
    """The files of the loaded modules by stem: a line event's label (the file's stem, ``bank`` for
    ``tests/own_code/bank.py``) names a file when exactly one loaded module's file has that stem.

    Built once per table, not per row: the modules loaded are the same for every row of one replay."""
    files: dict[str, set[str]] = {}
    for module in list(sys.modules.values()):
        if filename := str(getattr(module, "__file__", "") or ""):
            files.setdefault(Path(filename).stem, set()).add(filename)
    return files
