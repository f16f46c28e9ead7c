"""A recorded trace as swimlanes: one lane per actor, the steps each took, and the spans it spent waiting.

Both reports draw from this one model (``report.html`` as a grid, ``report.md`` as a Mermaid diagram), so the two
pictures cannot tell different stories. It reads only the trace and decides nothing: a wait is a recorded event that
says the actor blocked (a latch not yet open, a lock held by another, a barrier not yet full, a hold, a sleep), and
it ends at that actor's next event, because a blocked actor does nothing else until it is woken. A wait with no
next event never ended (a deadlock, a hang). Who woke it is the last other actor that touched the object waited on
before the wake-up, as recorded; nothing is inferred beyond that.

Rows are the trace's events in order, with runs of probe points one actor passes on one object folded into one
row, as the Mermaid diagram always did. A schedule string (exploration records hold no traces, only the choices)
becomes a :class:`Strip`: one column per choice, which actor ran and which could have.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass

from lab.engine.core import ActorEnd, Json, RunStatus, TraceEvent, read_schedule

MAX_ROWS = 400
"""Rows drawn at most; a longer trace ends with a row pointing at ``trace.jsonl``."""
LAB = "lab"
"""The lab's own actor name in a trace (deadlock, hang, final state)."""


@dataclass(frozen=True)
class Mark:
    """One row of one lane: what the actor did (``kind`` is start, step, note, wake, wait, end or error)."""

    row: int
    actor: str
    kind: str
    op: str
    obj: str
    text: str
    outcome: str = ""
    """The outcome an ``end`` mark reports."""


@dataclass(frozen=True)
class Wait:
    """A span an actor spent blocked: from the row it began waiting to the row it was woken (``None``: never)."""

    actor: str
    start: int
    end: int | None
    kind: str
    """latch, lock, barrier, hold, sleep, condition, event, semaphore or queue."""
    on: str
    """The object waited on: a latch's or lock's name (for a hold, the latch it waits for)."""
    text: str
    woken_by: str = ""
    """The last other actor to touch ``on`` before the wake-up ("" when none did)."""


@dataclass(frozen=True)
class LabRow:
    """A row of the lab's own (deadlock, hang, final state), across every lane."""

    row: int
    op: str
    text: str


@dataclass(frozen=True)
class Timeline:
    """The swimlanes of one trace."""

    actors: tuple[str, ...]
    rows: int
    marks: tuple[Mark, ...]
    waits: tuple[Wait, ...]
    lab: tuple[LabRow, ...]
    steps: tuple[int, ...]
    """The trace step each row begins with."""
    final: Mapping[str, Json] | None
    omitted: int
    """Events not drawn (past :data:`MAX_ROWS` rows)."""

    def outcome(self, actor: str) -> str:
        """The outcome ``actor``'s ``end`` event reports, or "" when it did not end."""
        return next((m.outcome for m in self.marks if m.actor == actor and m.kind == "end"), "")


def build_timeline(events: Sequence[TraceEvent], actors: Sequence[str]) -> Timeline:
    """The swimlanes of ``events``; ``actors`` fixes the lanes' order (any other actor the trace names follows)."""
    lanes = tuple(dict.fromkeys([*actors, *(e.actor for e in events if e.actor != LAB)]))
    groups = list(_fold(events))
    drawn, omitted = groups[:MAX_ROWS], sum(len(g) for g in groups[MAX_ROWS:])
    marks: list[Mark] = []
    lab: list[LabRow] = []
    waits: list[Wait] = []
    open_waits: dict[str, tuple[int, TraceEvent, str, str]] = {}
    final: Mapping[str, Json] | None = None
    for row, group in enumerate(drawn):
        first = group[0]
        if first.actor == LAB:
            if first.op == "final":
                final = dict(first.detail)
            lab.append(LabRow(row, first.op, lab_text(first)))
            continue
        woken = open_waits.pop(first.actor, None)
        if woken is not None:
            start, began, kind, on = woken
            waits.append(
                Wait(first.actor, start, row, kind, on, _wait_text(began, kind, on), _waker(events, began, first, on))
            )
        kind = _wait_kind(first)
        if kind:
            on = str(first.detail.get("until", first.obj)) if first.op == "hold" else first.obj
            open_waits[first.actor] = (row, first, kind, on)
        marks.append(_mark(row, group, woken is not None, kind))
    for actor, (start, began, kind, on) in sorted(open_waits.items(), key=lambda item: item[1][0]):
        waits.append(Wait(actor, start, None, kind, on, _wait_text(began, kind, on)))
    steps = tuple(group[0].step for group in drawn)
    return Timeline(lanes, len(drawn), tuple(marks), tuple(waits), tuple(lab), steps, final, omitted)


def lab_text(event: TraceEvent) -> str:
    """The words for one of the lab's own events."""
    if event.op == "deadlock":
        blocked = event.detail.get("blocked", [])
        waits = [f"{pair[0]} waits for {pair[1]}" for pair in blocked if isinstance(pair, list) and len(pair) == 2]
        return f"{RunStatus.DEADLOCK}: " + "; ".join(waits) if waits else RunStatus.DEADLOCK.value
    if event.op == "final":
        return "final state " + value_text(dict(event.detail))
    return with_detail(event.op.upper() if event.op == "hang" else event.op, event.detail)


def with_detail(text: str, detail: Mapping[str, Json], skip: str = "") -> str:
    """``text (key=value, ...)``, the keys sorted, ``skip`` left out."""
    extra = ", ".join(f"{key}={value_text(value)}" for key, value in sorted(detail.items()) if key != skip)
    return f"{text} ({extra})" if extra else text


def value_text(value: Json) -> str:
    """A recorded value as text: strings as they are, anything else as canonical JSON."""
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, sort_keys=True)


@dataclass(frozen=True)
class Choice:
    """One column of a :class:`Strip`: the actor that ran, those that could have, and whether it preempted."""

    chosen: str
    runnable: tuple[str, ...]
    preempts: str
    """The actor that ran at the previous choice and could have gone on, but was put aside ("" when none)."""


@dataclass(frozen=True)
class Strip:
    """A schedule string as lanes: one column per choice between runnable actors, in order."""

    actors: tuple[str, ...]
    choices: tuple[Choice, ...]
    readable: bool
    """False when the string does not name these actors' choices (then ``choices`` is empty)."""


def build_strip(schedule: str, actors: Sequence[str]) -> Strip:
    """The choices of ``schedule`` over ``actors``, read by the engine's own parser
    (:func:`lab.engine.core._schedule.read_schedule`, both spellings), so a report draws exactly what replay would
    follow; a string that parser refuses is drawn as unreadable rather than guessed at."""
    lanes = tuple(actors)
    steps = read_schedule(schedule, lanes)
    if steps is None:
        return Strip(lanes, (), False)
    choices: list[Choice] = []
    previous = ""
    for name, names in steps:
        preempts = previous if previous and previous != name and previous in names else ""
        choices.append(Choice(name, names, preempts))
        previous = name
    return Strip(lanes, tuple(choices), True)


def runs(strip: Strip) -> Iterator[tuple[int, int, Choice]]:
    """Maximal runs of consecutive choices of one actor: ``(first, last, first choice)``, choices counted from 1."""
    start = 0
    for index in range(1, len(strip.choices) + 1):
        if index == len(strip.choices) or strip.choices[index].chosen != strip.choices[start].chosen:
            yield start + 1, index, strip.choices[start]
            start = index


def _fold(events: Iterable[TraceEvent]) -> Iterator[list[TraceEvent]]:
    group: list[TraceEvent] = []
    for event in events:
        if (
            group
            and event.op == "probe"
            and group[-1].op == "probe"
            and (event.actor, event.obj) == (group[-1].actor, group[-1].obj)
        ):
            group.append(event)
            continue
        if group:
            yield group
        group = [event]
    if group:
        yield group


def _wait_kind(event: TraceEvent) -> str:
    """The kind of wait ``event`` begins, or "" when the actor goes on at once."""
    op, detail = event.op, event.detail
    family = op.split(".", 1)[0]
    if op == "latch.wait":
        return "latch" if detail.get("blocked") is True else ""
    if op == "barrier.wait":
        arrived, parties = detail.get("arrived"), detail.get("parties")
        return "barrier" if isinstance(arrived, int) and isinstance(parties, int) and arrived < parties else ""
    if op == "event.wait":
        return "event" if detail.get("set") is False else ""
    if op in ("lock.wait", "condition.wait", "semaphore.wait", "queue.wait"):
        return family
    if op == "queue.join":
        return "queue" if detail.get("unfinished") not in (0, None) else ""
    return op if op in ("hold", "sleep") else ""


def _wait_text(event: TraceEvent, kind: str, on: str) -> str:
    detail = event.detail
    if kind == "latch":
        return f"waits for latch {on}" + (f" ({detail['remaining']} to go)" if "remaining" in detail else "")
    if kind == "lock":
        holder = detail.get("holder")
        return f"waits for lock {on}" + (f" (held by {value_text(holder)})" if holder else "")
    if kind == "barrier":
        return f"waits at barrier {on} ({detail.get('arrived')} of {detail.get('parties')} arrived)"
    if kind == "hold":
        return f"held at {value_text(detail.get('point', '?'))} until latch {on} opens"
    if kind == "sleep":
        return f"sleeps {value_text(detail.get('seconds', '?'))} s of the virtual clock"
    return f"waits on {kind} {on}" + (f" (for {value_text(detail['for'])})" if "for" in detail else "")


def _waker(events: Sequence[TraceEvent], began: TraceEvent, woke: TraceEvent, on: str) -> str:
    """The last actor other than the sleeper to touch ``on`` between the wait and the wake-up."""
    between = [e for e in events if began.step < e.step < woke.step]
    return next((e.actor for e in reversed(between) if e.obj == on and e.actor not in (began.actor, LAB)), "")


def _mark(row: int, group: list[TraceEvent], wakes: bool, waits: str) -> Mark:
    first = group[0]
    actor, op, obj = first.actor, first.op, first.obj
    if op == "probe":
        points = ", ".join(str(event.detail.get("point", "?")) for event in group)
        return Mark(row, actor, "step", op, obj, f"probe {points} on {obj}")
    if op in ("start", "end", "error", "note"):
        if op == "end":
            outcome = str(first.detail.get("outcome", "?"))
            return Mark(row, actor, "end", op, obj, f"ends {outcome}", outcome)
        if op == "error":
            raised = f"raised {value_text(first.detail.get('type', '?'))}"
            return Mark(row, actor, "error", op, obj, raised, ActorEnd.ERROR.value)
        if op == "note":
            return Mark(
                row, actor, "note", op, obj, with_detail(str(first.detail.get("text", "")), first.detail, "text")
            )
        return Mark(row, actor, "start", op, obj, "starts")
    kind = "wait" if waits else "wake" if wakes else "step"
    return Mark(row, actor, kind, op, obj, with_detail(f"{op} {obj}" if obj else op, first.detail))
