"""``report.md``: the human summary of an evidence folder, readable on GitHub with its sequence diagrams.

It is made from the same data the JSON records hold (the run record and the scenario results) and decides
nothing: verdicts and totals come from the runner. Table cells are escaped (``|`` and line breaks), diagrams by
:mod:`lab.evidence.report.mermaid`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from lab.engine.core import Json
from lab.evidence.report.mermaid import sequence_diagram
from lab.evidence.report.title import report_title
from lab.scenarios.loader import BrokenScenario
from lab.scenarios.runner import ScenarioResult, Verdict


def render_report(
    run: Mapping[str, Json],
    results: Sequence[ScenarioResult],
    broken: Sequence[BrokenScenario],
    records: Sequence[tuple[str, Mapping[str, Any]]] = (),
) -> str:
    """The Markdown text of ``report.md``; ``records``: the exploration records, which the title names too."""
    lines = [f"# {report_title(run, len(results), records)}", ""]
    lines += _run_table(run)
    lines += [
        "",
        "Verify this folder with `python audit.py <this folder>`: `SHA256SUMS` fingerprints every file, "
        "and `sources/` holds the code that ran, so the audit can run it again.",
        "",
    ]
    if broken:
        lines += ["## Broken scenario files", ""]
        lines += [f"- `{_cell(b.path.name)}`: {_cell(b.problem)}" for b in broken]
        lines.append("")
    lines += ["## Scenarios", "", "| scenario | verdict | outcomes | checks |", "| --- | --- | --- | --- |"]
    for result in results:
        outcomes = ", ".join(f"{actor}: {outcome}" for actor, outcome in result.outcomes.items()) or "-"
        lines.append(
            f"| [{result.name}](#{result.name}) | {result.verdict} | {_cell(outcomes)} "
            f"| {result.checks_passed}/{len(result.checks)} |"
        )
    for result in results:
        lines += ["", *_scenario(result)]
    return "\n".join(lines) + "\n"


def _run_table(run: Mapping[str, Json]) -> list[str]:
    python = run.get("python")
    python_text = f"{python.get('implementation')} {python.get('version')}" if isinstance(python, dict) else "?"
    checks = run.get("checks")
    checks_text = f"{checks.get('passed')} passed, {checks.get('failed')} failed" if isinstance(checks, dict) else "?"
    git = run.get("git")
    git_text = "not a git checkout"
    if isinstance(git, dict):
        git_text = f"`{git.get('commit')}`" + (" with uncommitted changes" if git.get("dirty") else ", clean")
    command = run.get("command")
    rows = [
        ("status", f"**{run.get('status')}**"),
        ("checks", checks_text),
        ("transport calls", f"{run.get('transport_calls')} scripted, {run.get('network_requests')} over the network"),
        ("started", str(run.get("started"))),
        ("duration", f"{run.get('duration_seconds')} s"),
        ("lab", f"{run.get('lab_version')} on {python_text}, {run.get('platform')}"),
        ("git", git_text),
        ("command", f"`{' '.join(map(str, command))}`" if isinstance(command, list) else "?"),
    ]
    return ["| run | |", "| --- | --- |", *(f"| {name} | {_cell(value)} |" for name, value in rows)]


def _scenario(result: ScenarioResult) -> list[str]:
    lines = [f"## {result.name}", "", ("**MUTANT.** " if result.mutant else "") + f"**{result.lesson}**", ""]
    how = [f"run {result.run_status}"]
    variant, granularity = getattr(result, "variant", ""), getattr(result, "granularity", "probe")  # newer runners
    how += [f"variant {variant}"] if variant else []
    how += [f"{granularity} granularity"] if granularity and granularity != "probe" else []
    lines.append(f"Source: {result.source}. Verdict: **{result.verdict}** ({', '.join(how)}).")
    if result.verdict is Verdict.SKIPPED:  # it ran nothing: no check says why, its reason does
        lines[-1] += f" Not run: {_cell(result.problem)}."
    lines.append("")
    body = result.description.strip().splitlines()[1:]  # the first line is the lesson, shown above
    while body and not body[0].strip():
        body.pop(0)
    lines += [f"> {line}".rstrip() for line in body] or ["> (no description beyond the lesson)"]
    lines += ["", "| actor | outcome | expected |", "| --- | --- | --- |"]
    for actor, outcome in result.outcomes.items():
        lines.append(f"| {_cell(actor)} | {_cell(outcome)} | {_cell(result.expect.get(actor, '-'))} |")
    failed = [check for check in result.checks if not check.passed]
    if failed:
        lines += ["", "Failed checks:", ""]
        lines += [f"- {_cell(check.name)}: {_cell(check.reason)}" for check in failed]
    if result.blocked:
        lines += ["", "Blocked:", ""]
        lines += [f"- {_cell(b.actor)} waits for {_cell(b.waits_for)}" for b in result.blocked]
    for actor, error in result.errors.items():
        last = [line for line in error.strip().splitlines() if line.strip()]
        lines += ["", f"{_cell(actor)} raised: `{_cell(last[-1] if last else '?')}`"]
    if result.trace:
        lines += [
            "",
            race_caption(result) or "What each actor did, in order (a note per turn; a wait ends at an arrow):",
        ]
        lines += ["", "```mermaid", sequence_diagram(result.trace, list(result.outcomes)).rstrip("\n"), "```"]
    return lines


def race_caption(result: ScenarioResult) -> str:
    """For a race (a scenario that expects no outcome of any actor): the diagram is one schedule, not the race."""
    if result.expect:
        return ""
    return (
        "A race: this run took one schedule, the scheduler's default (an actor runs until it blocks or ends), and "
        "that is what is drawn. Every schedule that matters is run by `lab explore`; the Exploration "
        "section, when there is one, draws its failing schedules."
    )


def _cell(value: object) -> str:
    return " ".join(str(value).split()).replace("|", "\\|")
