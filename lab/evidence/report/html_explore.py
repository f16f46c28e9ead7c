"""The exploration part of ``report.html``: per exploration its outcome table with the counts as bars, one example
schedule per outcome reached, the shortest counterexample of each failing row with its replay command; then the kill
matrix.

Exploration records hold schedules, not traces, so a schedule is drawn as what it is: the choices between runnable
actors, in order (:func:`~lab.evidence.report.html_kit.strip_html`). Its replay command shows the whole run.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from lab.evidence.records.cross_check import MODEL_GAP, cross_check_line
from lab.evidence.report.failing import failing_schedules
from lab.evidence.report.html_kit import badge, esc, strip_html
from lab.scenarios.explaining import replay_command
from lab.scenarios.kill_matrix import CellStatus
from lab.scenarios.outcomes import FAILING_GRADES


def exploration_html(
    settings: Mapping[str, Any] | None,
    records: Sequence[tuple[str, Mapping[str, Any]]],
    kill: Mapping[str, Any] | None,
    actors: Mapping[str, Sequence[str]],
    *,
    checks: Mapping[str, Mapping[str, Any]] | None = None,
) -> str:
    """The section, or "" when the run did not explore; ``actors``: each scenario's actors, in order; ``checks``:
    real threads' check of each exploration, by its path (:func:`~lab.evidence.records.cross_check.checks_of`)."""
    checks = checks or {}
    if settings is None and not records and kill is None:
        return ""
    parts = ['<section class="explorations" id="exploration"><h2>Exploration</h2>']
    if settings is not None:
        bound = settings["preemption_bound"]
        parts.append(
            f"<p>Explored at {esc(' and '.join(settings['granularities']) or 'no')} granularity, "
            + esc("without a preemption bound" if bound is None else f"with at most {bound} preemptions")
            + f", at most {esc(settings['max_schedules'])} schedules per exploration.</p>"
        )
    parts.append(
        '<p class="note">Exploration records keep schedules, not traces: a schedule is drawn as its choices between '
        "runnable actors, each column a run of choices of one actor (numbered from 1), * marking a preemption (the "
        "actor that ran before could have gone on). Its replay command shows the whole run.</p>"
    )
    for rel, record in records:
        parts.append(_exploration(rel, record, actors.get(record["name"], ()), checks.get(rel)))
    if kill is not None:
        parts.append(_kill_matrix(kill))
    parts.append("</section>")
    return "\n".join(parts)


def _exploration(
    rel: str, record: Mapping[str, Any], actors: Sequence[str], check: Mapping[str, Any] | None = None
) -> str:
    title = " · ".join(filter(None, (record["name"], record["granularity"], record["variant"])))
    total = max(int(record["schedules"]), 1)
    gap = check is not None and bool(check["model_gaps"])
    verdict = str(check["verdict"]) if check is not None else str(record["verdict"])
    parts = [
        f'<section class="exploration" data-scenario="{esc(record["name"])}" data-file="{esc(rel)}">',
        f"<h3>{esc(title)} {badge(verdict, 'verdict')}" + (f" {esc(MODEL_GAP)}" if gap else "") + "</h3>",
        f'<p class="note">{esc(record["schedules"])} schedules ({esc(record["pruned"])} pruned; a naive enumeration '
        f"would try up to {esc(record['naive_bound'])}), {esc(record['distinct'])} distinct outcomes"
        + ("; the schedule budget was hit" if record["budget_hit"] else "")
        + f". Record: <code>{esc(rel)}</code>.</p>",
        '<table class="bars"><tr><th>grade</th><th>reason</th><th>schedules</th></tr>',
    ]
    for row in record["rows"]:
        width = int(row["schedules"]) * 100 // total
        parts.append(
            f"<tr><td>{badge(str(row['grade']), 'grade')}</td><td>{esc(row['reason'])}</td>"
            f'<td class="count"><span class="meter"><span style="width:{width}%"></span></span>'
            f"{esc(row['schedules'])}</td></tr>"
        )
    parts.append("</table>")
    for failing in failing_schedules(record):
        which = "The shortest counterexample" if failing.shortest else "The first schedule found to reach it"
        parts += [
            f'<div class="counterexample"><h4>{esc(failing.title)}</h4><p class="note">{which}: '
            f"<code>{esc(failing.schedule)}</code></p>",
            f'<p class="reached">Reached: <code>{esc(failing.reached)}</code></p>',
            strip_html(failing.schedule, actors),
            f"<p>Replay: <code>{esc(failing.replay)}</code></p>",
        ]
        if failing.shortest:
            parts.append(_steps(record["counterexample"]))
            parts.append(_explanation(record))
        parts.append("</div>")
    for row in record["rows"]:
        if row["grade"] in FAILING_GRADES or not row["schedules"] or not row["example"]:
            continue
        command = replay_command(record["name"], row["example"], record["granularity"], record["variant"])
        parts += [
            f'<div class="example"><h4>Example: {badge(str(row["grade"]), "grade")} {esc(row["reason"])}</h4>',
            strip_html(str(row["example"]), actors),
            f"<p>Replay: <code>{esc(command)}</code></p></div>",
        ]
    if record["problem"]:
        parts.append(f"<p>Problem: {esc(record['problem'])}</p>")
    if check is not None:
        searched = f" The search alone said {record['verdict']}." if gap else ""
        parts.append(
            f'<p class="cross-check">Cross-check: {esc(cross_check_line(check))}.{esc(searched)} '
            f"Record: <code>{esc(check['file'])}</code>.</p>"
        )
    parts.append("</section>")
    return "\n".join(parts)


def _steps(example: Mapping[str, Any]) -> str:
    """The failing run step by step, the racing steps marked with what they touched (records written before
    counterexamples kept their steps have none: then nothing)."""
    steps = example.get("steps")
    if not steps:
        return ""
    racing = _racing_accesses(example.get("explanation"))
    rows = []
    for step in steps:
        number = int(step["step"])
        touched = racing.get(number)
        mark = ' class="racing"' if touched else ""
        did = "; ".join(str(event) for event in step["did"]) or "(nothing recorded)"
        rows.append(
            f'<li data-step="{number}" data-actor="{esc(step["actor"])}"{mark}><span class="num">{number}</span> '
            f"<b>{esc(step['actor'])}</b> {esc(did)}"
            + (f'<span class="touched"> races: {esc("; ".join(touched))}</span>' if touched else "")
            + "</li>"
        )
    left = int(example.get("steps_left_out", 0))
    more = f'<p class="note">{left} more steps are left out.</p>' if left else ""
    return (
        '<details class="steps" open><summary>The run step by step (racing steps marked)</summary>'
        f'<ol class="steps">{"".join(rows)}</ol>{more}</details>'
    )


def _racing_accesses(explanation: object) -> dict[int, list[str]]:
    """Each racing step's number, with the accesses by which it races (from the explanation's swap and races)."""
    found: dict[int, list[str]] = {}
    if not isinstance(explanation, Mapping):
        return found
    races = [explanation.get("swap"), *(explanation.get("racing") or [])]
    for race in races:
        if not isinstance(race, Mapping):
            continue
        for side in ("first", "second"):
            step = race.get(side)
            if isinstance(step, Mapping):
                accesses = [f"{a['access']} at {a['file']}:{a['line']}" for a in step.get("accesses", [])]
                known = found.setdefault(int(step["step"]), [])
                known.extend(a for a in accesses if a not in known)
    return found


def _explanation(record: Mapping[str, Any]) -> str:
    example = record["counterexample"]
    explanation = example.get("explanation")
    replays = "It replays." if example["replayed"] else "It did NOT replay."
    count = int(example["preemptions"])
    parts = [f'<p class="note">{count} preemption{"" if count == 1 else "s"}. {replays}</p>']
    if isinstance(explanation, Mapping):
        parts.append("<p>Why it fails:</p><ul>")
        parts += [f"<li>{esc(sentence.strip())}</li>" for sentence in explanation["text"]]
        parts.append("</ul>")
        swapped = explanation["swapped"]
        if isinstance(swapped, Mapping):
            command = replay_command(record["name"], swapped["schedule"], record["granularity"], record["variant"])
            parts.append(f"<p>The allowed run, swapped: <code>{esc(command)}</code></p>")
    return "".join(parts)


def _kill_matrix(kill: Mapping[str, Any]) -> str:
    scenarios: list[str] = kill["scenarios"]
    parts = ['<section class="kill-matrix" id="kill-matrix"><h3>Kill matrix</h3>']
    if kill["ok"]:
        parts.append("<p>OK: every mutant was killed by some race scenario, and no correct variant was.</p>")
    else:
        parts.append("<p>Problems:</p><ul>" + "".join(f"<li>{esc(p)}</li>" for p in kill["problems"]) + "</ul>")
    parts.append('<div class="scroll"><table><tr><th>variant</th>' + "".join(f"<th>{esc(s)}</th>" for s in scenarios))
    for variant in kill["variants"]:
        row = [f"<tr><th>{esc(variant)}{' (correct)' if variant in kill['correct'] else ''}</th>"]
        for scenario in scenarios:
            cells = [c for c in kill["cells"] if c["variant"] == variant and c["scenario"] == scenario]
            row.append(
                "<td>"
                + (
                    " ".join(f"{badge(str(c['status']), 'status')} {esc(c['granularity'])}" for c in cells)
                    if cells
                    else "-"
                )
                + "</td>"
            )
        parts.append("".join(row) + "</tr>")
    parts.append("</table></div>")
    killed = [c for c in kill["cells"] if c["status"] == CellStatus.KILLED]
    if killed:
        parts.append("<p>Counterexamples:</p><ul>")
        parts += [
            f"<li>{esc(c['variant'])} × {esc(c['scenario'])} ({esc(c['granularity'])}): "
            f"{esc(c['why'])} <details><summary>schedule</summary><code>{esc(c['schedule'])}</code></details></li>"
            for c in killed
        ]
        parts.append("</ul>")
    parts.append("</section>")
    return "\n".join(parts)
