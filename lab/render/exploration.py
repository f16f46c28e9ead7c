"""An exploration: its table, its graded outcome rows, its counterexample and why, and the mutant kill matrix."""

from __future__ import annotations

from collections.abc import Sequence

from rich.console import Console, RenderableType
from rich.table import Table
from rich.text import Text

from lab.render.commands import Invocation
from lab.render.fitting import Fitted, Hanging, hanging, indented, verdict_text
from lab.scenarios.exploring import ScenarioExploration
from lab.scenarios.kill_matrix import KillMatrix


def exploration_table(explorations: Sequence[ScenarioExploration]) -> Fitted:
    """One row per exploration: verdict, what it claims (interleaving classes, executions run, those that ended
    redundant), the naive bound, distinct outcomes."""

    def lines() -> list[RenderableType]:
        return [
            hanging(
                verdict_text(found.verdict.value),
                " ",
                (found.name, "bold"),
                f"  {found.granularity}"
                + (f"  {found.variant}" if found.variant else "")
                + f"  {_counts(found)}, naive bound {naive_text(found.naive_bound)}, "
                f"{_plural(found.distinct, 'outcome')}, {found.seconds:.2f} s",
            )
            for found in explorations
        ]

    return Fitted(lambda: _exploration_table(explorations), lines)


def _exploration_table(explorations: Sequence[ScenarioExploration]) -> Table:
    table = Table(title="Exploration", expand=False)
    for column, justify in (
        ("scenario", "left"),
        ("variant", "left"),
        ("granularity", "left"),
        ("verdict", "left"),
        ("classes", "right"),
        ("executions", "right"),
        ("redundant", "right"),
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
            str(found.classes),
            str(found.executions),
            str(found.blocked),
            naive_text(found.naive_bound),
            str(found.distinct),
            f"{found.seconds:.2f}",
        )
    return table


def _counts(found: ScenarioExploration) -> str:
    """What an exploration claims, in the words its record uses: classes found, executions run, redundant ones."""
    cut = found.pruned - found.blocked
    return (
        f"{found.classes} interleaving classes, {found.executions} executions run "
        f"({found.blocked} redundant{f', {cut} cut by the preemption bound' if cut else ''})"
    )


def naive_text(bound: int) -> str:
    """A naive-enumeration bound, in scientific notation once it stops being readable."""
    if bound < 10**7:
        return str(bound)
    digits = str(bound)  # integer arithmetic: a bound past 1e308 does not fit a float
    rounded = (int(digits[:3]) + 5) // 10  # the two leading digits, rounded half up
    if rounded == 100:
        return f"1.0e+{len(digits):02d}"
    return f"{rounded // 10}.{rounded % 10}e+{len(digits) - 1:02d}"


def outcome_rows_table(found: ScenarioExploration) -> Fitted:
    """The graded outcome table of one exploration, with the exact number of schedules per row."""
    title = f"{found.name}" + (f" over {found.variant}" if found.variant else "") + f" ({found.granularity})"

    def lines() -> list[RenderableType]:
        shown: list[RenderableType] = []
        for row in found.rows:
            outcome = ", ".join(f"{k}={v}" for k, v in row.expect.items())
            shown.append(hanging(_grade_text(row.grade), f"  {row.schedules} schedules  {outcome}"))
            if row.reason:
                shown.append(indented(row.reason, style="dim"))
        return shown

    return Fitted(lambda: _outcome_rows_table(found, title), lines)


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


def print_counterexample(console: Console, found: ScenarioExploration, invocation: Invocation | None = None) -> None:
    """The shortest failing schedule, why it fails, and the command that replays it, spelt as the person ran the
    lab (``invocation``; by default ``lab``)."""
    invocation = invocation or Invocation()
    example = found.counterexample
    if example is None:
        return
    console.print(Hanging(Text.assemble(("counterexample", "red"), f" in {found.name}: {example.why}"), rest=2))
    console.print(Hanging(Text(f"  reached: {', '.join(f'{k}={v}' for k, v in example.observed.items())}"), rest=4))
    # One logical line, never wrapped by us: a schedule cut in two could not be pasted back.
    command = invocation.replay(found.name, example.schedule, found.granularity, found.variant)
    console.print(f"  replay:  {command}", markup=False, highlight=False, soft_wrap=True)
    print_explanation(console, found, invocation)
    if found.problem:
        console.print(f"  [yellow]{found.problem}[/]", highlight=False)


def print_explanation(console: Console, found: ScenarioExploration, invocation: Invocation | None = None) -> None:
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
        command = (invocation or Invocation()).replay(
            found.name, explanation.swapped.schedule, found.granularity, found.variant
        )
        console.print(f"  allowed: {command}", markup=False, highlight=False, soft_wrap=True)


def kill_matrix_table(matrix: KillMatrix) -> Fitted:
    """Rows are session variants, columns are race scenarios; a cell says at which granularities it was killed."""

    def lines() -> list[RenderableType]:
        found: list[RenderableType] = []
        for variant in matrix.variants:
            found.append(Text(variant + (" (correct)" if variant in matrix.correct else ""), style="bold"))
            for scenario in matrix.scenarios:
                cell = _kill_cell(matrix, variant, scenario)
                if cell.plain != "-":
                    found.append(indented(Text.assemble(f"{scenario}: ", cell)))
        return found

    return Fitted(lambda: _kill_matrix_table(matrix), lines)


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


def _plural(count: int, word: str) -> str:
    """``1 outcome``, ``3 outcomes``."""
    return f"{count} {word}{'' if count == 1 else 's'}"
