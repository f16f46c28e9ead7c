"""A result against its own trace: the trace parses line by line, and every outcome, the final state and the run
status in ``result.json`` are what the trace's events say.

An actor's outcome is its ``end`` event's ``detail.outcome``; an actor with an ``error`` event ended with ERROR; an
actor with neither never finished, and is BLOCKED in a deadlock, HUNG in a hang, UNFINISHED otherwise. The state is
the detail of the lab's ``final`` event, the trace's last.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from lab.engine.core import ActorEnd, RunStatus, TraceEvent, encode_trace
from lab.evidence.records.findings import Problem
from lab.evidence.records.layout import result_path, trace_path
from lab.evidence.records.records import same_json
from lab.evidence.records.safefs import printable
from lab.evidence.records.text import STRICT_JSON
from lab.scenarios.runner import Verdict


def parse_trace(data: bytes, rel: str, problems: list[Problem]) -> list[TraceEvent] | None:
    """The events of a ``trace.jsonl``, or ``None`` (with a problem naming the first bad line) if any line is bad."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as error:
        problems.append(Problem(rel, f"is not UTF-8 (byte 0x{data[error.start]:02x} at offset {error.start})"))
        return None
    lines = text.split("\n")
    if lines[-1]:
        problems.append(Problem(rel, "the last line does not end with a newline: the file is truncated"))
    events: list[TraceEvent] = []
    bad: list[str] = []
    for number, line in enumerate(lines[:-1] if not lines[-1] else lines, start=1):
        item = _event(line, number - 1)
        if isinstance(item, str):
            bad.append(f"line {number} {item}")
        else:
            events.append(TraceEvent(item["step"], item["actor"], item["op"], item["obj"], item["detail"]))
    if bad:
        more = f" (and {len(bad) - 1} more bad lines)" if len(bad) > 1 else ""
        problems.append(Problem(rel, bad[0] + more))
        return None
    try:
        canonical = encode_trace(events) == data
    except (TypeError, ValueError, RecursionError):
        canonical = False
    if not canonical:
        problems.append(Problem(rel, "is not written the way the lab writes traces (compact JSON, fixed key order)"))
    return events


def _event(line: str, index: int) -> dict[str, Any] | str:
    """Line ``index`` of a trace, parsed once: its event's fields, or what is wrong with it."""
    try:
        item = STRICT_JSON.decode(line)
    except json.JSONDecodeError as error:
        return f"is not JSON ({error.msg})"
    except (ValueError, RecursionError):  # an integer too long to convert; nesting too deep
        return "is not usable JSON"
    if not isinstance(item, dict):
        return "is not a JSON object"
    for key, kind in (("actor", str), ("op", str), ("obj", str), ("detail", dict)):
        if not isinstance(item.get(key), kind):
            return f"has no {key} of the right kind"
    if item.get("step") != index or isinstance(item.get("step"), bool):
        return f"has step {repr(item.get('step'))[:40]}, expected {index}"
    return item


def check_against_trace(
    name: str, result: Mapping[str, Any], events: Sequence[TraceEvent], problems: list[Problem]
) -> None:
    """Compare scenario ``name``'s ``result.json`` (already checked for its fields) with its parsed trace."""
    rel, trace_rel = result_path(name), trace_path(name)
    if result["trace_events"] != len(events):
        problems.append(Problem(rel, f"says {result['trace_events']} trace events; trace.jsonl has {len(events)}"))
    ends = {e.actor: e.detail.get("outcome") for e in events if e.op == "end"}
    raised = {e.actor for e in events if e.op == "error"}
    status = result["run_status"]
    outcomes: Mapping[str, str] = result["outcomes"]
    if sorted(result["actors"]) != sorted(outcomes):
        problems.append(Problem(rel, "actors and outcomes name different actors"))
    unfinished = ActorEnd.unfinished(status)
    for actor, outcome in outcomes.items():
        from_trace = ends.get(actor, ActorEnd.ERROR if actor in raised else unfinished)
        if outcome != from_trace:
            problems.append(
                Problem(
                    rel,
                    f"{printable(actor)}'s outcome is {printable(outcome)}, but the trace says "
                    f"{printable(str(from_trace))}",
                )
            )
    for actor in sorted((ends.keys() | raised) - outcomes.keys()):
        problems.append(Problem(trace_rel, f"ends actor {printable(actor)!r}, which result.json does not list"))
    _check_final(name, result, events, problems)
    for op, word in (("deadlock", RunStatus.DEADLOCK), ("hang", RunStatus.HUNG)):
        marked = [e for e in events if e.op == op]
        if bool(marked) != (status == word):
            problems.append(
                Problem(
                    rel,
                    f"run_status is {printable(status)}, but the trace {'has a' if marked else 'has no'} {op} event",
                )
            )
        elif marked and op == "deadlock":
            stuck = [[b["actor"], b["waits_for"]] for b in result["blocked"]]
            if marked[0].detail.get("blocked") != stuck:
                problems.append(Problem(rel, "blocked actors differ from the trace's deadlock event"))


def _check_final(name: str, result: Mapping[str, Any], events: Sequence[TraceEvent], problems: list[Problem]) -> None:
    finals = [index for index, event in enumerate(events) if event.op == "final"]
    if finals:
        if finals != [len(events) - 1] or events[-1].actor != "lab":
            problems.append(Problem(trace_path(name), "the 'final' event must be the last one, once, by lab"))
        elif not same_json(dict(events[-1].detail), result["state"]):  # exactly: 1 in the trace is not true
            problems.append(Problem(result_path(name), "state differs from the trace's final event"))
    elif result["verdict"] not in (Verdict.ERROR, Verdict.SKIPPED):
        problems.append(Problem(trace_path(name), "has no final event, though the scenario ran to a verdict"))
    elif result["state"]:
        problems.append(Problem(result_path(name), "has a state, but the trace has no final event"))
