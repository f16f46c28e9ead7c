"""Terminal rendering with rich: the edge of the lab, fed only by plain result data."""

from __future__ import annotations

from collections.abc import Sequence

from rich.console import Console
from rich.table import Table
from rich.text import Text

from lab.scenarios.loader import BrokenScenario, LoadedScenario
from lab.scenarios.runner import ScenarioResult, Verdict

_VERDICT_STYLE = {Verdict.PASS: "green", Verdict.FAIL: "red", Verdict.ERROR: "red"}


def summary_table(results: Sequence[ScenarioResult]) -> Table:
    """One row per scenario: lesson, outcome per actor, checks passed/failed, verdict."""
    table = Table(title="Scenarios", show_lines=False, expand=False)
    table.add_column("scenario", style="bold", no_wrap=True)
    table.add_column("lesson", overflow="fold", ratio=3)
    table.add_column("outcomes", overflow="fold", ratio=2)
    table.add_column("checks", justify="right", no_wrap=True)
    table.add_column("verdict", no_wrap=True)
    for result in results:
        outcomes = ", ".join(f"{actor}: {outcome}" for actor, outcome in result.outcomes.items()) or "-"
        checks = f"{result.checks_passed}/{len(result.checks)}"
        lesson = ("[mutant] " if result.mutant else "") + result.lesson
        table.add_row(result.name, lesson, outcomes, checks,
                      Text(result.verdict.value, style=_VERDICT_STYLE[result.verdict]))
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


def list_table(items: Sequence[LoadedScenario | BrokenScenario]) -> Table:
    """Every scenario file with its one-line lesson (or why it does not load)."""
    table = Table(title="Scenarios", expand=False)
    table.add_column("name", style="bold", no_wrap=True)
    table.add_column("source", no_wrap=True)
    table.add_column("lesson", overflow="fold")
    for item in items:
        if isinstance(item, BrokenScenario):
            table.add_row(item.name, "", Text(f"broken: {item.problem}", style="red"))
        else:
            lesson = ("[mutant] " if item.cls.mutant else "") + item.lesson
            table.add_row(item.name, item.cls.source, lesson)
    return table
