"""The pieces every part of ``report.html`` shares: escaping, badges, a schedule's strip, and the page's style.

Every text that reaches the page goes through :func:`esc`, attributes included: a scenario name, a note or a
reason is data, and data never becomes markup. Colours come from the recorded words alone (a verdict, a grade, an
outcome, a kill-matrix status); the page decides nothing.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from html import escape

from lab.engine.core import ActorEnd
from lab.evidence.report.timeline import build_strip, runs
from lab.scenarios.results import NOT_RUN

LAB_STATUSES = frozenset({*ActorEnd, NOT_RUN})
"""Outcomes the lab itself gives an actor that did not end on its own."""
_TOKEN = re.compile(r"[^A-Za-z0-9_-]")


def esc(value: object) -> str:
    """``value`` as text that can stand in an element or a quoted attribute and never be read as markup."""
    return escape(str(value), quote=True)


def token(value: object) -> str:
    """``value`` reduced to a class-name token (letters, digits, ``_`` and ``-``)."""
    return _TOKEN.sub("_", str(value))


def badge(word: str, family: str) -> str:
    """A coloured word: a verdict, a grade, an outcome or a status (``family`` picks the palette)."""
    return f'<span class="badge {family}-{token(word)}">{esc(word)}</span>'


def outcome_badge(outcome: str, expected: str) -> str:
    """An actor's outcome, coloured by whether it is the one expected (no expectation: neutral)."""
    if outcome in LAB_STATUSES:
        tone = "bad"
    elif not expected:
        tone = "plain"
    else:
        tone = "good" if outcome == expected else "bad"
    return f'<span class="badge tone-{tone}" data-outcome="{esc(outcome)}">{esc(outcome or "-")}</span>'


def strip_html(schedule: str, actors: Sequence[str]) -> str:
    """A schedule's choices as a table: one row per actor, one column per run of choices of one actor."""
    strip = build_strip(schedule, actors)
    if not strip.readable:
        return f'<p class="note">The schedule <code>{esc(schedule)}</code> does not name these actors.</p>'
    if not strip.choices:
        return '<p class="note">No choice: only one actor could run at every point.</p>'
    spans = list(runs(strip))
    head = "".join(
        f'<th title="{esc(_run_title(first, last, choice.preempts))}">'
        f"{first if first == last else f'{first}-{last}'}{'*' if choice.preempts else ''}</th>"
        for first, last, choice in spans
    )
    rows = []
    for actor in strip.actors:
        cells = []
        for first, last, choice in spans:
            if choice.chosen == actor:
                cells.append(f'<td class="ran" data-actor="{esc(actor)}">runs ×{last - first + 1}</td>')
            elif actor in choice.runnable:
                cells.append('<td class="could">could run</td>')
            else:
                cells.append("<td></td>")
        rows.append(f'<tr><th class="who">{esc(actor)}</th>{"".join(cells)}</tr>')
    return (
        '<div class="scroll"><table class="strip"><thead><tr><th class="who">choice</th>'
        f"{head}</tr></thead><tbody>{''.join(rows)}</tbody></table></div>"
    )


def _run_title(first: int, last: int, preempts: str) -> str:
    where = f"choice {first}" if first == last else f"choices {first} to {last}"
    return where + (f"; preempts {preempts}" if preempts else "")


STYLE = """
:root{--ink:#1f2328;--mute:#59636e;--line:#d1d9e0;--soft:#f6f8fa;--good:#1a7f37;--goodbg:#dafbe1;--bad:#cf222e;
--badbg:#ffebe9;--warn:#9a6700;--warnbg:#fff8c5;--info:#0969da;--infobg:#ddf4ff;--wait:#8250df;--waitbg:#fbefff}
*{box-sizing:border-box}
body{margin:0;font:14px/1.45 system-ui,-apple-system,"Segoe UI",Helvetica,Arial,sans-serif;color:var(--ink)}
main{max-width:1220px;margin:0 auto;padding:16px 24px 48px}
h1{font-size:24px;margin:8px 0 12px}
h2{font-size:20px;margin:36px 0 6px;padding-top:12px;border-top:2px solid var(--line)}
h3{font-size:16px;margin:24px 0 6px}h4{font-size:14px;margin:16px 0 4px}
code,pre{font:12px/1.4 ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;overflow-wrap:anywhere}
pre{background:var(--soft);padding:8px;white-space:pre-wrap;margin:6px 0}
table{border-collapse:collapse;margin:6px 0;display:block;overflow-x:auto;max-width:100%}
th,td{border:1px solid var(--line);padding:3px 8px;text-align:left;
vertical-align:top}th{background:var(--soft)}
.note{color:var(--mute);font-size:12px;margin:4px 0}.lesson{font-size:16px;font-weight:600;margin:4px 0}
.badge{display:inline-block;padding:0 6px;border-radius:8px;font-weight:600;font-size:12px;background:var(--soft)}
.verdict-PASS,.tone-good,.grade-ACCEPTABLE{background:var(--goodbg);color:var(--good)}
.verdict-FAIL,.verdict-ERROR,.tone-bad,.grade-FORBIDDEN,.grade-UNDECLARED{
background:var(--badbg);color:var(--bad)}
.verdict-INCOMPLETE,.status-incomplete{background:var(--warnbg);color:var(--warn)}
.grade-INTERESTING,.tone-plain,.status-killed{background:var(--infobg);color:var(--info)}
.checks{list-style:none;padding:0;margin:6px 0}.checks li{margin:2px 0}
.checks .ok::before{content:"\\2713  ";color:var(--good)}.checks .failed::before{content:"\\2717  ";color:var(--bad)}
.scroll{overflow-x:auto;max-width:100%}
.timeline{display:grid;gap:2px 0;margin:8px 0;font-size:12px;min-width:min-content}
.timeline .head{position:sticky;top:0;background:var(--soft);font-weight:600;padding:4px 6px;border-bottom:2px solid
var(--line);z-index:1}
.timeline .num{color:var(--mute);text-align:right;padding:2px 6px;font-variant-numeric:tabular-nums}
.timeline .mark{padding:2px 6px;border-left:1px solid var(--line);overflow-wrap:anywhere}
.mark.kind-start,.mark.kind-step{color:var(--mute)}.mark.kind-note{font-weight:600}
.mark.kind-wait{color:var(--wait);font-weight:600}.mark.kind-wake{color:var(--wait)}
.mark.kind-end,.mark.kind-error{font-weight:600}
.timeline .bar{background:var(--wait);border-radius:3px;margin:0 3px;min-height:8px}
.timeline .bar.unended{background:repeating-linear-gradient(180deg,var(--bad) 0 6px,transparent 6px 10px)}
.timeline .waiting{background:var(--waitbg);color:var(--wait);padding:2px 6px;font-style:italic;
overflow-wrap:anywhere}
.timeline .waiting.unended{background:var(--badbg);color:var(--bad)}
.timeline .labrow{background:var(--soft);padding:3px 6px;font-weight:600;overflow-wrap:anywhere}
.timeline .labrow.op-deadlock,.timeline .labrow.op-hang{background:var(--badbg);color:var(--bad)}
.bars td.count{white-space:nowrap}.meter{display:inline-block;width:160px;height:10px;background:var(--soft);
border:1px solid var(--line);vertical-align:middle;margin-right:6px}.meter span{display:block;height:100%;
background:var(--info)}
.strip td,.strip th{font-size:11px;white-space:nowrap;padding:2px 5px}.strip td.ran{background:var(--info);
color:#fff;font-weight:600}.strip td.could{background:var(--soft);color:var(--mute)}.strip th.who{text-align:right}
.counterexample{border-left:4px solid var(--bad);padding:2px 12px;margin:10px 0;background:#fffafa}
.example{border-left:4px solid var(--line);padding:2px 12px;margin:10px 0}
nav table td:first-child a{font-weight:600}
ol.steps{list-style:none;padding:0;margin:4px 0;font-size:12px;max-height:28em;overflow-y:auto}
ol.steps li{padding:1px 6px;overflow-wrap:anywhere}ol.steps li .num{color:var(--mute);display:inline-block;
min-width:2.5em;text-align:right;margin-right:6px}ol.steps li.racing{background:var(--badbg)}
ol.steps .touched{color:var(--bad)}
@media (max-width:600px){main{padding:10px 10px 32px}h1{font-size:20px}h2{font-size:18px}.meter{width:80px}}
"""
