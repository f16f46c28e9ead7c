"""Terminal rendering with rich: the edge of the lab, fed only by plain result data.

Every summary is a table where it fits the width it is printed at (a terminal's, ``COLUMNS``, or 80 in a pipe),
and one item per line where it does not: a table squeezed below its natural width would give a column no width,
cut a name or split a word, and a person reading a CI log at 80 columns deserves better.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence

from rich.console import Console, ConsoleOptions, RenderableType
from rich.measure import Measurement
from rich.table import Table
from rich.text import Text

from lab.engine.trace import TraceEvent
from lab.scenarios.explaining import replay_command
from lab.scenarios.exploring import ScenarioExploration
from lab.scenarios.kill_matrix import KillMatrix
from lab.scenarios.loader import BrokenScenario, LoadedScenario
from lab.scenarios.runner import ScenarioResult, Verdict

_VERDICT_STYLE = {Verdict.PASS: "green", Verdict.FAIL: "red", Verdict.ERROR: "red", Verdict.SKIPPED: "yellow"}


class _Fitted:
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


class _Hanging:
    """Text wrapped between words at the width it is printed at, its first line indented by ``first`` columns and
    the others by ``rest``, with no trailing spaces (a padded line is noise in a log file)."""

    def __init__(self, text: Text, first: int = 0, rest: int = 4) -> None:
        self._text = text
        self._first = first
        self._rest = rest

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> Iterator[RenderableType]:
        width = max(options.max_width - self._rest, 20)
        lines = self._text.wrap(console, width, overflow="fold")
        for index, line in enumerate(lines):
            line.rstrip()
            yield Text.assemble(" " * (self._first if index == 0 else self._rest), line)


def _indented(text: str | Text, style: str = "") -> _Hanging:
    """A line indented by four columns, its continuation lines too."""
    return _Hanging(text if isinstance(text, Text) else Text(text, style=style), first=4, rest=4)


def _hanging(*parts: str | Text | tuple[str, str]) -> _Hanging:
    """One item's line: continuation lines indented, so the names at the left margin stand out."""
    return _Hanging(Text.assemble(*parts))


def verdict_text(word: str) -> Text:
    """A verdict word in its colour: PASS green, FAIL and ERROR red, anything else (INCOMPLETE) yellow."""
    return Text(word, style={"PASS": "green", "FAIL": "red", "ERROR": "red", "BROKEN": "red"}.get(word, "yellow"))


def summary_table(results: Sequence[ScenarioResult]) -> _Fitted:
    """One row per scenario: lesson, outcome per actor, checks passed/failed, verdict."""

    def lines() -> list[RenderableType]:
        found: list[RenderableType] = []
        for result in results:
            outcomes = ", ".join(f"{actor}: {outcome}" for actor, outcome in result.outcomes.items()) or "-"
            found.append(
                _hanging(
                    verdict_text(result.verdict.value),
                    " ",
                    (result.name, "bold"),
                    f"  {outcomes}  ({result.checks_passed}/{len(result.checks)} checks)",
                )
            )
            found.append(_indented(("[mutant] " if result.mutant else "") + result.lesson, style="dim"))
        return found

    return _Fitted(lambda: _summary_table(results), lines)


def _summary_table(results: Sequence[ScenarioResult]) -> Table:
    table = Table(title="Scenarios", show_lines=False, expand=False)
    table.add_column("scenario", style="bold", no_wrap=True)
    table.add_column("lesson", overflow="fold", ratio=3)
    table.add_column("outcomes", overflow="fold", ratio=2)
    table.add_column("checks", justify="right", no_wrap=True)
    table.add_column("verdict", no_wrap=True)
    for result in results:
        outcomes = ", ".join(f"{actor}: {outcome}" for actor, outcome in result.outcomes.items()) or "-"
        checks = f"{result.checks_passed}/{len(result.checks)}"
        lesson = Text(("[mutant] " if result.mutant else "") + result.lesson)
        table.add_row(
            result.name,
            lesson,
            Text(outcomes),
            checks,
            Text(result.verdict.value, style=_VERDICT_STYLE[result.verdict]),
        )
    return table


def print_failures(console: Console, results: Sequence[ScenarioResult]) -> None:
    """For each scenario that did not pass: the checks that failed, and what blocked or raised."""
    for result in results:
        if result.passed:
            continue
        console.print(f"[bold red]{result.name}[/]: {result.verdict.value}")
        for check in result.checks:
            if not check.passed:
                console.print(f"  - {check.name}: {check.reason}", markup=False, highlight=False)
        for blocked in result.blocked:
            console.print(f"  blocked: {blocked.actor} waits for {blocked.waits_for}", markup=False, highlight=False)
        for actor, error in result.errors.items():
            last = error.strip().splitlines()[-1] if error.strip() else ""
            console.print(f"  {actor} raised: {last}", markup=False, highlight=False)
        if result.verdict is Verdict.SKIPPED:  # nothing ran, so no check says why: its reason does
            console.print(f"  not run: {result.problem}", markup=False, highlight=False)


def list_table(items: Sequence[LoadedScenario | BrokenScenario]) -> _Fitted:
    """Every scenario file with its one-line lesson (or why it does not load)."""

    def lines() -> list[RenderableType]:
        found: list[RenderableType] = []
        for item in items:
            if isinstance(item, BrokenScenario):
                found.append(_hanging((item.name, "bold"), "  ", (f"broken: {item.problem}", "red")))
            else:
                found.append(_hanging((item.name, "bold"), (f"  ({item.cls.source})", "dim")))
                found.append(_indented(("[mutant] " if item.cls.mutant else "") + item.lesson))
        return found

    return _Fitted(lambda: _list_table(items), lines)


def _list_table(items: Sequence[LoadedScenario | BrokenScenario]) -> Table:
    table = Table(title="Scenarios", expand=False)
    table.add_column("name", style="bold", no_wrap=True)
    table.add_column("source", no_wrap=True)
    table.add_column("lesson", overflow="fold")
    for item in items:
        if isinstance(item, BrokenScenario):
            table.add_row(item.name, "", Text(f"broken: {item.problem}", style="red"))
        else:
            lesson = Text(("[mutant] " if item.cls.mutant else "") + item.lesson)
            table.add_row(item.name, item.cls.source, lesson)
    return table


def exploration_table(explorations: Sequence[ScenarioExploration]) -> _Fitted:
    """One row per exploration: verdict, schedules run and pruned, the naive bound, distinct outcomes."""

    def lines() -> list[RenderableType]:
        return [
            _hanging(
                verdict_text(found.verdict.value),
                " ",
                (found.name, "bold"),
                f"  {found.granularity}"
                + (f"  {found.variant}" if found.variant else "")
                + f"  {found.schedules} schedules, {found.pruned} cut short, naive "
                f"{naive_text(found.naive_bound)}, {found.distinct} outcomes, {found.seconds:.2f} s",
            )
            for found in explorations
        ]

    return _Fitted(lambda: _exploration_table(explorations), lines)


def _exploration_table(explorations: Sequence[ScenarioExploration]) -> Table:
    table = Table(title="Exploration", expand=False)
    for column, justify in (
        ("scenario", "left"),
        ("variant", "left"),
        ("granularity", "left"),
        ("verdict", "left"),
        ("schedules", "right"),
        ("pruned", "right"),
        ("naive bound", "right"),
        ("outcomes", "right"),
        ("seconds", "right"),
    ):
        table.add_column(column, justify=justify, no_wrap=column != "scenario")  # type: ignore[arg-type]
    for found in explorations:
        style = {"PASS": "green", "FAIL": "red"}.get(found.verdict.value, "yellow")
        table.add_row(
            found.name,
            found.variant or "-",
            found.granularity,
            Text(found.verdict.value, style=style),
            str(found.schedules),
            str(found.pruned),
            naive_text(found.naive_bound),
            str(found.distinct),
            f"{found.seconds:.2f}",
        )
    return table


def naive_text(bound: int) -> str:
    """A naive-enumeration bound, in scientific notation once it stops being readable."""
    if bound < 10**7:
        return str(bound)
    digits = str(bound)  # integer arithmetic: a bound past 1e308 does not fit a float
    rounded = (int(digits[:3]) + 5) // 10  # the two leading digits, rounded half up
    if rounded == 100:
        return f"1.0e+{len(digits):02d}"
    return f"{rounded // 10}.{rounded % 10}e+{len(digits) - 1:02d}"


def outcome_rows_table(found: ScenarioExploration) -> _Fitted:
    """The graded outcome table of one exploration, with the exact number of schedules per row."""
    title = f"{found.name}" + (f" over {found.variant}" if found.variant else "") + f" ({found.granularity})"

    def lines() -> list[RenderableType]:
        shown: list[RenderableType] = []
        for row in found.rows:
            outcome = ", ".join(f"{k}={v}" for k, v in row.expect.items())
            shown.append(_hanging(_grade_text(row.grade), f"  {row.schedules} schedules  {outcome}"))
            if row.reason:
                shown.append(_indented(row.reason, style="dim"))
        return shown

    return _Fitted(lambda: _outcome_rows_table(found, title), lines)


def _grade_text(grade: str) -> Text:
    return Text(grade, style={"ACCEPTABLE": "green", "INTERESTING": "yellow"}.get(grade, "red"))


def _outcome_rows_table(found: ScenarioExploration, title: str) -> Table:
    table = Table(title=title, expand=False, title_justify="left")
    table.add_column("grade", no_wrap=True)
    table.add_column("schedules", justify="right")
    table.add_column("outcome", overflow="fold")
    table.add_column("why", overflow="fold")
    for row in found.rows:
        outcome = ", ".join(f"{k}={v}" for k, v in row.expect.items())
        table.add_row(_grade_text(row.grade), str(row.schedules), outcome, row.reason)
    return table


def print_counterexample(console: Console, found: ScenarioExploration) -> None:
    """The shortest failing schedule, why it fails, and the command that replays it."""
    example = found.counterexample
    if example is None:
        return
    console.print(f"[red]counterexample[/] in {found.name}: {example.why}", highlight=False)
    console.print(
        f"  reached: {', '.join(f'{k}={v}' for k, v in example.observed.items())}", markup=False, highlight=False
    )
    # One logical line, never wrapped by us: a schedule cut in two could not be pasted back.
    console.print(f"  replay:  {found.replay_command}", markup=False, highlight=False, soft_wrap=True)
    print_explanation(console, found)
    if found.problem:
        console.print(f"  [yellow]{found.problem}[/]", highlight=False)


def print_explanation(console: Console, found: ScenarioExploration) -> None:
    """Why the counterexample fails, wrapped at 80 columns between words (never inside a name or a path), and the
    command that replays the allowed run the swap gives (one long line: a schedule is not cut either)."""
    example = found.counterexample
    if example is None or example.explanation is None:
        return
    explanation = example.explanation
    console.print("  why:", markup=False, highlight=False)
    for line in explanation.lines(width=80, indent="    "):
        console.print(line, markup=False, highlight=False, soft_wrap=True)
    if explanation.swapped is not None:
        command = replay_command(found.name, explanation.swapped.schedule, found.granularity, found.variant)
        console.print(f"  allowed: {command}", markup=False, highlight=False, soft_wrap=True)


def kill_matrix_table(matrix: KillMatrix) -> _Fitted:
    """Rows are session variants, columns are race scenarios; a cell says at which granularities it was killed."""

    def lines() -> list[RenderableType]:
        found: list[RenderableType] = []
        for variant in matrix.variants:
            found.append(Text(variant + (" (correct)" if variant in matrix.correct else ""), style="bold"))
            for scenario in matrix.scenarios:
                cell = _kill_cell(matrix, variant, scenario)
                if cell.plain != "-":
                    found.append(_indented(Text.assemble(f"{scenario}: ", cell)))
        return found

    return _Fitted(lambda: _kill_matrix_table(matrix), lines)


def _kill_matrix_table(matrix: KillMatrix) -> Table:
    table = Table(title="Mutant kill matrix (killed at which granularity, or survived both)", expand=False)
    table.add_column("variant", no_wrap=True, style="bold")
    for scenario in matrix.scenarios:
        table.add_column(scenario, no_wrap=True)
    for variant in matrix.variants:
        label = variant + (" (correct)" if variant in matrix.correct else "")
        table.add_row(label, *(_kill_cell(matrix, variant, scenario) for scenario in matrix.scenarios))
    return table


def _kill_cell(matrix: KillMatrix, variant: str, scenario: str) -> Text:
    parts = [(g, matrix.cell(variant, scenario, g)) for g in ("probe", "line", "instruction")]
    found = [(g, c) for g, c in parts if c is not None]
    if not found:
        return Text("-", style="dim")
    killed_at = [g for g, c in found if c.killed]
    text = f"killed ({', '.join(killed_at)})" if killed_at else "survived"
    incomplete = [g for g, c in found if c.status == "incomplete"]
    text += f"; incomplete ({', '.join(incomplete)})" if incomplete else ""
    killed = any(c.killed for _, c in found)
    as_it_should = killed != (variant in matrix.correct)
    return Text(text, style="green" if as_it_should else "red")


def replay_table(result: ScenarioResult, actors: Sequence[str]) -> _Fitted:
    """The interleaving as Lincheck prints one: a column per actor, switches and waits named, state rows; where
    that does not fit, one event per line, each named by its step and actor."""
    rows = _replay_rows(result, actors)

    def lines() -> list[RenderableType]:
        shown: list[RenderableType] = []
        for step, actor, cell in rows:
            if actor is None:
                shown.append(_indented(cell.plain, style=str(cell.style)))
            else:
                shown.append(_Hanging(Text.assemble(f"{step:>4} ", (actor, "bold"), ": ", cell), rest=6))
        return shown

    return _Fitted(lambda: _replay_grid(result.name, actors, rows), lines)


def _replay_rows(result: ScenarioResult, actors: Sequence[str]) -> list[tuple[str, str | None, Text]]:
    """(step, actor, cell) for every row of the replay: an actor of ``None`` is a state row, a switch has no step."""
    rows: list[tuple[str, str | None, Text]] = []
    states = dict(result.state_rows)
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
        if event.actor not in actors:
            rows.append((str(event.step), event.actor, Text(event.describe(), style="bold")))
            continue
        rows.append((str(event.step), event.actor, _replay_cell(event)))
        if event.step in states:
            state = ", ".join(f"{k}={v}" for k, v in states[event.step].items())
            rows.append(("", None, Text(f"state: {state}", style="cyan")))
    return rows


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


def _replay_cell(event: TraceEvent) -> Text:
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
    return Text(event.describe())
