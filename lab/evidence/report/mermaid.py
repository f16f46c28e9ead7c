"""A trace as a Mermaid ``sequenceDiagram``, the picture GitHub draws from ``report.md``, narrow enough to read there.

One participant per actor and nothing else: what an actor does to a lock, a latch or a session is a line of a note
over that actor, one note per turn (the actor's consecutive events), so the diagram is as wide as its actors, not as
its objects. It is drawn from the swimlane model (:mod:`lab.evidence.report.timeline`) that ``report.html`` draws
too: a wait is the actor's last line before its lifeline is activated, and its wake-up an arrow from the actor that
last touched what it waited on (``a1-->>a0: latch.open fast-committed``); the lab's own events (deadlock, hang,
final state) are notes across every actor. Each line is wrapped between words at :data:`WRAP` characters with
``<br>``, so a note is never wider than its text allows and never clipped. Participants get short ids (``a0``) so no
name can clash with a Mermaid keyword, and every text is escaped with Mermaid's entity codes: its lexer ends a
message at ``;`` or ``#``, and quotes and angle brackets are HTML to it.

A schedule (exploration records hold no traces) is drawn by :func:`schedule_diagram`: a note per run of one actor's
choices, and an arrow where the run passes to another actor, saying whether that was a preemption.
"""

from __future__ import annotations

import textwrap
from collections.abc import Sequence

from lab.engine.core import RunStatus, TraceEvent
from lab.evidence.report.timeline import Mark, Wait, build_strip, build_timeline, runs

MAX_EVENTS = 250
"""Rows drawn at most; a longer trace ends with a note pointing at ``trace.jsonl``."""
WRAP = 44
"""The widest line of a note, in characters, with up to three actors; longer texts wrap between words."""
NARROW = 132
"""With more actors, a line is at most this many characters shared among them (at least 20), so that nine actors
still fit about as wide as three."""
_ESCAPES = str.maketrans({char: f"#{ord(char)};" for char in '#;"<>&%'})


def sequence_diagram(events: Sequence[TraceEvent], actors: Sequence[str]) -> str:
    """The Mermaid source (without the code fence) for ``events``; ``actors`` fixes the participants' order."""
    timeline = build_timeline(events[:MAX_EVENTS], actors)
    lanes = timeline.actors or ("lab",)
    ids = {name: f"a{index}" for index, name in enumerate(lanes)}
    span = ids[lanes[0]] if len(lanes) == 1 else f"{ids[lanes[0]]},{ids[lanes[-1]]}"
    lines = ["sequenceDiagram", *(f"    participant {ids[name]} as {_escape(name)}" for name in lanes)]
    marks = {mark.row: mark for mark in timeline.marks}
    labs = {lab.row: lab for lab in timeline.lab}
    starts = {wait.start: wait for wait in timeline.waits}
    ends = {wait.end: wait for wait in timeline.waits if wait.end is not None}
    turn: list[str] = []
    owner = ""
    width = WRAP if len(lanes) <= 3 else max(20, NARROW // len(lanes))

    def flush() -> None:
        if turn:
            lines.append(f"    Note over {ids[owner]}: {_join(turn, width)}")
            turn.clear()

    for row in range(timeline.rows):
        if row in labs:
            flush()
            lines.append(f"    Note over {span}: {_join(_lab_lines(labs[row].text))}")
            continue
        mark = marks[row]
        woken = ends.get(row)
        if woken is not None or mark.actor != owner:
            flush()
            owner = mark.actor
        if woken is not None:
            lines += _wake(woken, mark, ids, width)
        else:
            turn.append(mark.text)
        waiting = starts.get(row)
        if waiting is not None:
            turn[-1:] = [waiting.text]
            flush()
            lines.append(f"    activate {ids[mark.actor]}")
    flush()
    lines += [f"    deactivate {ids[wait.actor]}" for wait in timeline.waits if wait.end is None]
    if len(events) > MAX_EVENTS:
        lines.append(f"    Note over {span}: {len(events) - MAX_EVENTS} more events, see trace.jsonl")
    return "\n".join(lines) + "\n"


def schedule_diagram(schedule: str, actors: Sequence[str], ending: str) -> str:
    """The Mermaid source of a schedule's choices over ``actors``, closed by a note saying ``ending``."""
    strip = build_strip(schedule, actors)
    lanes = strip.actors or ("lab",)
    ids = {name: f"a{index}" for index, name in enumerate(lanes)}
    span = ids[lanes[0]] if len(lanes) == 1 else f"{ids[lanes[0]]},{ids[lanes[-1]]}"
    lines = ["sequenceDiagram", *(f"    participant {ids[name]} as {_escape(name)}" for name in lanes)]
    if not strip.readable:
        lines.append(f"    Note over {span}: {_join([f'the schedule does not name these actors: {schedule}'])}")
    previous = ""
    for first, last, choice in runs(strip):
        where = f"choice {first}" if first == last else f"choices {first}-{last}"
        if choice.preempts:
            lines.append(
                f"    {ids[choice.preempts]}->>{ids[choice.chosen]}: {_join([f'preempted at choice {first}'])}"
            )
        elif previous:
            lines.append(f"    {ids[previous]}-->>{ids[choice.chosen]}: {_join([f'blocked or ended: choice {first}'])}")
        lines.append(f"    Note over {ids[choice.chosen]}: {_join([f'{where}: {choice.chosen} runs'])}")
        previous = choice.chosen
    lines.append(f"    Note over {span}: {_join([ending])}")
    return "\n".join(lines) + "\n"


def _wake(wait: Wait, mark: Mark, ids: dict[str, str], width: int) -> list[str]:
    """The end of a wait: an arrow from whoever last touched what was waited on, closing the activation."""
    actor = ids[mark.actor]
    if wait.woken_by in ids and wait.woken_by != mark.actor:
        return [f"    deactivate {actor}", f"    {ids[wait.woken_by]}-->>{actor}: {_join([mark.text], width)}"]
    return [f"    deactivate {actor}", f"    Note over {actor}: {_join([mark.text], width)}"]


def _lab_lines(text: str) -> list[str]:
    """A lab row's text, a deadlock's blocked actors each on a line of their own."""
    head, _, rest = text.partition(": ")
    if head == RunStatus.DEADLOCK and rest:
        return [head, *rest.split("; ")]
    return [text]


def _join(texts: Sequence[str], width: int = WRAP) -> str:
    """The lines of a note or message: each escaped, wrapped between words at ``width``, joined with ``<br>``."""
    wrapped: list[str] = []
    for text in texts:
        flat = " ".join(text.split()) or "-"
        if len(flat) <= width:  # what textwrap would give, without its cost (a report wraps thousands of lines)
            wrapped.append(flat)
            continue
        wrapped += textwrap.wrap(flat, width, break_long_words=False, break_on_hyphens=False) or [flat]
    return "<br>".join(_escape(line) for line in wrapped)


def _escape(text: str) -> str:
    return text.translate(_ESCAPES)
