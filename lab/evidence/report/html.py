"""``report.html``: the evidence folder as one self-contained page, with a swimlane timeline per scenario.

No network, no script: inline CSS only, so the page opens the same anywhere, offline, and its bytes depend on the
records alone (the audit renders it again and compares, as it does ``report.md``). Per scenario: the lesson, the
checks, each actor's outcome, and the timeline (:mod:`lab.evidence.report.timeline`) as a CSS grid: time runs
down, one lane per actor, a violet bar and label where an actor waited and on what, the lab's own rows (deadlock,
final state) across every lane. Then the explorations and the kill matrix (:mod:`lab.evidence.report.html_explore`).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from lab.engine.core import Json
from lab.evidence.records.cross_check import checks_of
from lab.evidence.report.html_explore import exploration_html
from lab.evidence.report.html_kit import STYLE, badge, esc, outcome_badge, token
from lab.evidence.report.report import race_caption
from lab.evidence.report.timeline import Timeline, Wait, build_timeline
from lab.evidence.report.title import report_title
from lab.scenarios.loader import BrokenScenario
from lab.scenarios.runner import ScenarioResult


def render_html(
    run: Mapping[str, Json],
    results: Sequence[ScenarioResult],
    broken: Sequence[BrokenScenario],
    exploration: tuple[Mapping[str, Any] | None, Sequence[tuple[str, Mapping[str, Any]]], Mapping[str, Any] | None]
    | None = None,
) -> str:
    """The text of ``report.html``; ``exploration`` is ``(settings, records, kill matrix)`` when the run explored."""
    title = report_title(run, len(results), exploration[1] if exploration is not None else ())
    body = [f"<h1>{esc(title)}</h1>", _run_table(run)]
    body.append(
        '<p class="note">Verify this folder with <code>python audit.py &lt;this folder&gt;</code>: it checks every '
        "file against <code>SHA256SUMS</code>, renders this page again from the records and compares the bytes.</p>"
    )
    if broken:
        body.append("<h2>Broken scenario files</h2><ul>")
        body += [f"<li><code>{esc(b.path.name)}</code>: {esc(b.problem)}</li>" for b in broken]
        body.append("</ul>")
    body.append(_index(results))
    body += [_scenario(result) for result in results]
    if exploration is not None:
        actors = {result.name: list(result.outcomes) for result in results}
        body.append(exploration_html(*exploration, actors, checks=checks_of(run)))
    return (
        '<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        f"<title>{esc(title)}</title>\n<style>{STYLE}</style>\n</head>\n<body>\n<main>\n"
        + "\n".join(body)
        + "\n</main>\n</body>\n</html>\n"
    )


def _run_table(run: Mapping[str, Json]) -> str:
    python = run.get("python")
    checks = run.get("checks")
    git = run.get("git")
    command = run.get("command")
    rows = [
        ("status", badge(str(run.get("status")), "verdict")),
        (
            "checks",
            esc(f"{checks.get('passed')} passed, {checks.get('failed')} failed" if isinstance(checks, dict) else "?"),
        ),
        (
            "transport calls",
            esc(f"{run.get('transport_calls')} scripted, {run.get('network_requests')} over the network"),
        ),
        (
            "lab",
            esc(
                f"{run.get('lab_version')} on "
                + (f"{python.get('implementation')} {python.get('version')}" if isinstance(python, dict) else "?")
                + f", {run.get('platform')}"
            ),
        ),
        (
            "git",
            f"<code>{esc(git.get('commit'))}</code>" + (" with uncommitted changes" if git.get("dirty") else ", clean")
            if isinstance(git, dict)
            else "not a git checkout",
        ),
        ("command", f"<code>{esc(' '.join(map(str, command)))}</code>" if isinstance(command, list) else "?"),
    ]
    return "<table>" + "".join(f"<tr><th>{name}</th><td>{value}</td></tr>" for name, value in rows) + "</table>"


def _index(results: Sequence[ScenarioResult]) -> str:
    rows = []
    for result in results:
        outcomes = " ".join(
            f"{esc(actor)}: {outcome_badge(outcome, str(result.expect.get(actor, '')))}"
            for actor, outcome in result.outcomes.items()
        )
        rows.append(
            f'<tr><td><a href="#scenario-{esc(result.name)}">{esc(result.name)}</a></td>'
            f"<td>{badge(str(result.verdict), 'verdict')}</td><td>{outcomes or '-'}</td>"
            f"<td>{result.checks_passed}/{len(result.checks)}</td></tr>"
        )
    return (
        "<nav><h2>Scenarios</h2><table><tr><th>scenario</th><th>verdict</th><th>outcomes</th><th>checks</th></tr>"
        + "".join(rows)
        + "</table></nav>"
    )


def _scenario(result: ScenarioResult) -> str:
    how = [f"run {result.run_status}"]
    how += [f"variant {result.variant}"] if result.variant else []
    how += [f"{result.granularity} granularity"] if result.granularity and result.granularity != "probe" else []
    parts = [
        f'<section class="scenario" id="scenario-{esc(result.name)}" data-scenario="{esc(result.name)}">',
        f"<h2>{esc(result.name)} {badge(str(result.verdict), 'verdict')}"
        + (' <span class="badge tone-bad">MUTANT</span>' if result.mutant else "")
        + "</h2>",
        f'<p class="lesson">{esc(result.lesson)}</p>',
        f'<p class="note">Source: {esc(result.source)} ({esc(", ".join(how))}).</p>',
        *_description(result.description),
        _outcomes(result),
        _checks(result),
    ]
    if result.blocked:
        parts.append("<p>Blocked:</p><ul>")
        parts += [f"<li>{esc(b.actor)} waits for {esc(b.waits_for)}</li>" for b in result.blocked]
        parts.append("</ul>")
    for actor, error in result.errors.items():
        last = [line for line in error.strip().splitlines() if line.strip()]
        parts.append(f"<p>{esc(actor)} raised: <code>{esc(last[-1] if last else '?')}</code></p>")
    if result.trace:
        timeline = build_timeline(result.trace, list(result.outcomes))
        caption = race_caption(result).replace("`", "")
        parts += [
            "<h3>Timeline</h3>",
            f'<p class="note">{esc(caption)}</p>' if caption else "",
            _timeline(timeline, result),
        ]
        if timeline.final is not None:
            state = json.dumps(timeline.final, ensure_ascii=False, sort_keys=True, indent=2)
            parts.append(f"<h4>Final state</h4><pre>{esc(state)}</pre>")
    parts.append("</section>")
    return "\n".join(parts)


def _description(description: str) -> list[str]:
    body = description.strip().splitlines()[1:]  # the first line is the lesson, shown above
    paragraphs, current = [], []
    for line in [*body, ""]:
        if line.strip():
            current.append(line.strip())
        elif current:
            paragraphs.append(" ".join(current))
            current = []
    return [f"<p>{esc(paragraph)}</p>" for paragraph in paragraphs]


def _outcomes(result: ScenarioResult) -> str:
    rows = "".join(
        f"<tr><td>{esc(actor)}</td><td>{outcome_badge(outcome, str(result.expect.get(actor, '')))}</td>"
        f"<td>{esc(result.expect.get(actor, '-'))}</td></tr>"
        for actor, outcome in result.outcomes.items()
    )
    return f'<table class="outcomes"><tr><th>actor</th><th>outcome</th><th>expected</th></tr>{rows}</table>'


def _checks(result: ScenarioResult) -> str:
    items = "".join(
        f'<li class="{"ok" if check.passed else "failed"}">{esc(check.name)}'
        + ("" if check.passed or not check.reason else f": {esc(check.reason)}")
        + "</li>"
        for check in result.checks
    )
    return f'<h4>Checks: {result.checks_passed} of {len(result.checks)} passed</h4><ul class="checks">{items}</ul>'


def _timeline(timeline: Timeline, result: ScenarioResult) -> str:
    """The grid: column 1 the trace step, then per actor a narrow column for wait bars and one for its steps."""
    lanes = len(timeline.actors)
    column = {actor: 2 + 2 * index for index, actor in enumerate(timeline.actors)}
    cells = ['<div class="head num">step</div>']
    for actor in timeline.actors:
        outcome = str(result.outcomes.get(actor, timeline.outcome(actor)))
        cells.append(
            f'<div class="head" data-lane="{esc(actor)}" style="grid-column:{column[actor]}/span 2">{esc(actor)} '
            f"{outcome_badge(outcome, str(result.expect.get(actor, '')))}</div>"
        )
    for row, step in enumerate(timeline.steps):
        cells.append(f'<div class="num" style="grid-row:{row + 2};grid-column:1">{step}</div>')
    for mark in timeline.marks:
        cells.append(
            f'<div class="mark kind-{token(mark.kind)}" data-actor="{esc(mark.actor)}" data-kind="{esc(mark.kind)}"'
            + (f' data-outcome="{esc(mark.outcome)}"' if mark.outcome else "")
            + f' style="grid-row:{mark.row + 2};grid-column:{column[mark.actor] + 1}">'
            + (
                outcome_badge(mark.outcome, str(result.expect.get(mark.actor, "")))
                if mark.kind == "end"
                else esc(mark.text)
            )
            + "</div>"
        )
    for wait in timeline.waits:
        cells += _wait(wait, timeline, column[wait.actor])
    for lab in timeline.lab:
        cells.append(
            f'<div class="labrow op-{token(lab.op)}" style="grid-row:{lab.row + 2};grid-column:2/-1">'
            f"{esc(lab.text)}</div>"
        )
    if timeline.omitted:
        cells.append(
            f'<div class="labrow" style="grid-row:{timeline.rows + 2};grid-column:2/-1">'
            f"{timeline.omitted} more events: see trace.jsonl</div>"
        )
    template = f"grid-template-columns:3.5em repeat({lanes},10px minmax(13em,1fr))"
    return f'<div class="scroll"><div class="timeline" style="{template}">{"".join(cells)}</div></div>'


def _wait(wait: Wait, timeline: Timeline, column: int) -> list[str]:
    """The bar from the waiting step to the wake-up (or to the lab's next row, for a wait that never ended), and a
    label on the rows between."""
    if wait.end is not None:
        stop, cls, said = wait.end + 1, "", f"; woken by {wait.woken_by}" if wait.woken_by else ""
    else:
        stop = min((lab.row for lab in timeline.lab if lab.row > wait.start), default=timeline.rows)
        cls, said = " unended", "; still waiting when the run ended"
    attributes = f'data-actor="{esc(wait.actor)}" data-on="{esc(wait.on)}" data-kind="{esc(wait.kind)}"'
    cells = [
        f'<div class="bar{cls}" {attributes} title="{esc(wait.text + said)}" '
        f'style="grid-row:{wait.start + 2}/{stop + 2};grid-column:{column}"></div>'
    ]
    last = wait.end if wait.end is not None else stop
    if last > wait.start + 1:
        cells.append(
            f'<div class="waiting{cls}" {attributes} style="grid-row:{wait.start + 3}/{last + 2};'
            f'grid-column:{column + 1}">{esc(wait.text + said)}</div>'
        )
    return cells
