"""The exploration part of ``report.md``: an outcome table per exploration, and the kill matrix as a table.

Made from the records the folder holds (:mod:`lab.evidence.records.exploration`), so the report says nothing the
JSON does not. A kill-matrix cell groups its granularities by status (``killed (probe, line)``, ``killed (line) ·
survived (probe)``) and shows the shortest counterexample schedule of its killed ones; every killed cell's schedule and
reason are listed under the table.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from lab.evidence.records.cross_check import MODEL_GAP, cross_check_line
from lab.evidence.records.exploration import COUNT_WORDS
from lab.evidence.report.failing import failing_schedules
from lab.evidence.report.mermaid import schedule_diagram
from lab.evidence.report.timeline import value_text
from lab.scenarios.explaining import replay_command
from lab.scenarios.kill_matrix import CellStatus


def exploration_section(
    settings: Mapping[str, Any] | None,
    records: Sequence[tuple[str, Mapping[str, Any]]],
    kill: Mapping[str, Any] | None,
    actors: Mapping[str, Sequence[str]] | None = None,
    *,
    checks: Mapping[str, Mapping[str, Any]] | None = None,
) -> list[str]:
    """The Markdown lines of the section (empty when the run did not explore); ``actors``: each scenario's actors in
    order, for the pictures of failing schedules (none without it); ``checks``: real threads' check of each
    exploration, by its path (:func:`~lab.evidence.records.cross_check.checks_of`)."""
    checks = checks or {}
    if settings is None and not records and kill is None:
        return []
    lines = ["## Exploration", ""]
    if settings is not None:
        bound = settings["preemption_bound"]
        grains = " and ".join(settings["granularities"]) or "no"
        lines += [
            f"Explored at {grains} granularity, "
            f"{'without a preemption bound' if bound is None else f'with at most {bound} preemptions'}, "
            f"at most {settings['max_schedules']} schedules per exploration. The run's status counts the "
            f"explorations of each scenario's default variant (a FAIL or INCOMPLETE one fails the run) and the "
            f"kill matrix's problems; explorations of other variants only inform.",
            "",
        ]
        if checks:
            lines += [
                "Each exploration was then cross-checked on free real threads (`--cross-check`): an outcome they "
                "reached that no explored schedule did is a MODEL GAP, and makes its exploration FAIL. Real runs "
                "are not repeatable: their counts are what this run saw, and the audit checks their form only.",
                "",
            ]
    if records:
        lines += [
            "| scenario | variant | granularity | verdict | schedules | pruned | naive bound | outcomes |",
            "| --- | --- | --- | --- | --- | --- | --- | --- |",
        ]
        for rel, record in records:
            variant = record["variant"] + (" (default)" if record["default_variant"] and record["variant"] else "")
            lines.append(
                f"| {_cell(record['name'])} | {_cell(variant or '-')} | {record['granularity']} "
                f"| {_verdict(record, checks.get(rel))} | {record['schedules']} | {record['pruned']} "
                f"| {_big(record['naive_bound'])} | {record['distinct']} |"
            )
        for rel, record in records:
            lines += ["", *_exploration(rel, record, checks.get(rel))]
            if actors is not None:
                lines += _pictures(record, actors.get(record["name"], ()))
    if kill is not None:
        lines += ["", *_kill_matrix(kill)]
    return lines


def _verdict(record: Mapping[str, Any], check: Mapping[str, Any] | None) -> str:
    """The exploration's verdict after its cross-check: FAIL (MODEL GAP) when real threads found one."""
    if check is None or not check["model_gaps"]:
        return str(record["verdict"])
    return f"{check['verdict']} ({MODEL_GAP})"


def _exploration(rel: str, record: Mapping[str, Any], check: Mapping[str, Any] | None = None) -> list[str]:
    title = " · ".join(filter(None, (record["name"], record["granularity"], record["variant"])))
    lines = [f"### {_cell(title)}: {_verdict(record, check)}", ""]
    limits = [f"at most {record['preemption_bound']} preemptions"] if record["preemption_bound"] is not None else []
    limits += ["the schedule budget was hit"] if record["budget_hit"] else []
    lines.append(
        f"{_count(record['schedules'], 'schedule')} ({record['pruned']} pruned; a naive enumeration would "
        f"try up to {_big(record['naive_bound'])}), {_count(record['distinct'], 'distinct outcome')}"
        + (f"; {', '.join(limits)}" if limits else "")
        + f". Record: `{rel}`."
    )
    counts = record.get("counts")  # absent in records written before explorations counted classes
    if isinstance(counts, dict):
        lines += [
            "",
            "Counts: " + ", ".join(f"{key}: {_cell(str(counts[key]))}" for key in COUNT_WORDS if key in counts) + ".",
        ]
    lines += ["", "| grade | reason | count |", "| --- | --- | --- |"]
    lines += [f"| {_cell(row['grade'])} | {_cell(row['reason'])} | {row['schedules']} |" for row in record["rows"]]
    example = record["counterexample"]
    if example is not None:
        replays = "it replays" if example["replayed"] else "it did NOT replay"
        lines += [
            "",
            f"Counterexample ({_count(example['preemptions'], 'preemption')}, {replays}): "
            f"`{example['schedule']}`: {_cell(example['why'])}",
            "",
            f"Replay: `{record['replay_command']}`",
        ]
        lines += _explanation(record, example.get("explanation"))
    if record["problem"]:
        lines += ["", f"Problem: {_cell(record['problem'])}"]
    if check is not None:
        searched = f" The search alone said {record['verdict']}." if check["model_gaps"] else ""
        lines += ["", f"Cross-check: {_cell(cross_check_line(check))}.{searched} Record: `{check['file']}`."]
    return lines


def _pictures(record: Mapping[str, Any], actors: Sequence[str]) -> list[str]:
    """A diagram of each failing schedule: the shortest counterexample, and the first schedule of any other failing
    row (:mod:`lab.evidence.report.failing`)."""
    lines: list[str] = []
    example = record["counterexample"]
    for failing in failing_schedules(record):
        if failing.shortest:
            title, ending = "The shortest counterexample", f"ends {_outcome(example['observed'])}: {failing.title}"
        else:
            title, ending = "The first schedule found to reach it", f"ends {failing.reached}: {failing.title}"
        lines += ["", f"{title}, {_cell(failing.title)} (reached {_cell(failing.reached)}): `{failing.replay}`", ""]
        lines += ["```mermaid", schedule_diagram(failing.schedule, actors, ending).rstrip("\n"), "```"]
    return lines


def _outcome(observed: Mapping[str, Any]) -> str:
    return ", ".join(f"{key}={value_text(value)}" for key, value in sorted(observed.items()))


def _explanation(record: Mapping[str, Any], explanation: Any) -> list[str]:
    """Why the counterexample fails, as its record words it: a sentence per item, each conflicting access under the
    sentence it belongs to, then the command that replays the allowed run the swap gives."""
    if not isinstance(explanation, Mapping):
        return []
    lines = ["", "Why it fails:", ""]
    for sentence in explanation["text"]:
        lines.append(("  - " if sentence.startswith("  ") else "- ") + _cell(sentence))
    swapped = explanation["swapped"]
    if isinstance(swapped, Mapping):
        command = replay_command(record["name"], swapped["schedule"], record["granularity"], record["variant"])
        lines += ["", f"The allowed run, swapped: `{command}`"]
    return lines


def _kill_matrix(kill: Mapping[str, Any]) -> list[str]:
    scenarios: list[str] = kill["scenarios"]
    lines = ["## Kill matrix", ""]
    if kill["ok"]:
        lines.append("OK: every mutant was killed by some race scenario, and no correct variant was.")
    else:
        lines += ["Problems:", "", *(f"- {_cell(problem)}" for problem in kill["problems"])]
    lines += ["", "| variant | " + " | ".join(scenarios) + " |", "| --- |" + " --- |" * len(scenarios)]
    killed: list[Mapping[str, Any]] = []
    for variant in kill["variants"]:
        row = [_cell(variant) + (" (correct)" if variant in kill["correct"] else "")]
        for scenario in scenarios:
            cells = [c for c in kill["cells"] if c["variant"] == variant and c["scenario"] == scenario]
            row.append(_matrix_cell(cells))
            killed += [c for c in cells if c["status"] == CellStatus.KILLED]
        lines.append("| " + " | ".join(row) + " |")
    if killed:
        lines += ["", "Counterexamples:", ""]
        lines += [
            f"- {_cell(c['variant'])} × {c['scenario']} ({c['granularity']}): `{c['schedule']}`: {_cell(c['why'])}"
            for c in killed
        ]
    return lines


def _matrix_cell(cells: Sequence[Mapping[str, Any]]) -> str:
    if not cells:
        return "-"
    by_status: dict[str, list[str]] = {}
    for cell in cells:
        by_status.setdefault(cell["status"], []).append(cell["granularity"])
    if len(by_status) == 1 and CellStatus.KILLED not in by_status:
        return next(iter(by_status))
    text = " · ".join(f"{status} ({', '.join(grains)})" for status, grains in sorted(by_status.items()))
    shortest = min((c["schedule"] for c in cells if c["status"] == CellStatus.KILLED), key=len, default="")
    return text + (f": `{shortest}`" if shortest else "")


def _count(number: int, noun: str) -> str:
    return f"{number} {noun}{'' if number == 1 else 's'}"


def _big(digits: str) -> str:
    """A naive bound short enough for a table: exact up to 15 digits, else in scientific notation."""
    return digits if len(digits) <= 15 else f"{digits[0]}.{digits[1:3]}e{len(digits) - 1}"


def _cell(value: object) -> str:
    return " ".join(str(value).split()).replace("|", "\\|")
