"""The scenarios: the list with lessons, a run's summary, and what failed."""

from __future__ import annotations

from collections.abc import Sequence

from rich.console import Console, RenderableType
from rich.table import Table
from rich.text import Text

from lab.render.fitting import Fitted, Hanging, hanging, indented, verdict_text
from lab.scenarios.loader import BrokenScenario, LoadedScenario
from lab.scenarios.runner import ScenarioResult, Verdict

_VERDICT_STYLE = {Verdict.PASS: "green", Verdict.FAIL: "red", Verdict.ERROR: "red", Verdict.SKIPPED: "yellow"}


def summary_table(results: Sequence[ScenarioResult]) -> Fitted:
    """One row per scenario: lesson, outcome per actor, checks passed/failed, verdict."""

    def lines() -> list[RenderableType]:
        found: list[RenderableType] = []
        for result in results:
            outcomes = ", ".join(f"{actor}: {outcome}" for actor, outcome in result.outcomes.items()) or "-"
            found.append(
                hanging(
                    verdict_text(result.verdict.value),
                    " ",
                    (result.name, "bold"),
                    f"  {outcomes}  ({result.checks_passed}/{len(result.checks)} checks)",
                )
            )
            found.append(indented(("[mutant] " if result.mutant else "") + result.lesson, style="dim"))
        return found

    return Fitted(lambda: _summary_table(results), lines)


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
                console.print(_detail(f"- {check.name}: {check.reason}"))
        for blocked in result.blocked:
            console.print(_detail(f"blocked: {blocked.actor} waits for {blocked.waits_for}"))
        for actor, error in result.errors.items():
            last = error.strip().splitlines()[-1] if error.strip() else ""
            console.print(_detail(f"{actor} raised: {last}"))
        if result.verdict is Verdict.SKIPPED:  # nothing ran, so no check says why: its reason does
            console.print(_detail(f"not run: {result.problem}"))


def _detail(line: str) -> Hanging:
    """A line under a scenario's name, indented by two columns and its continuation lines by four."""
    return Hanging(Text(line), first=2, rest=4)


def list_table(items: Sequence[LoadedScenario | BrokenScenario]) -> Fitted:
    """Every scenario file with its one-line lesson (or why it does not load)."""

    def lines() -> list[RenderableType]:
        found: list[RenderableType] = []
        for item in items:
            if isinstance(item, BrokenScenario):
                found.append(hanging((item.name, "bold"), "  ", (f"broken: {item.problem}", "red")))
            else:
                found.append(hanging((item.name, "bold"), (f"  ({item.cls.source})", "dim")))
                found.append(indented(("[mutant] " if item.cls.mutant else "") + item.lesson))
        return found

    return Fitted(lambda: _list_table(items), lines)


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
