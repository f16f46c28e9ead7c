"""The JSON records of an evidence folder (``run.json``, ``result.json``) and the one way to read JSON back.

Records are written with sorted keys, ``ensure_ascii=False``, UTF-8 and a trailing newline, so the same run writes
the same bytes; where order matters (actors, scenarios, checks) it is a list, not an object. Only ``timing``
fields, ``run.json``'s clock fields and paths in ``command`` depend on the machine.
"""

from __future__ import annotations

import hashlib
import json
import platform
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from lab.engine.core import BlockedActor, Json, TraceEvent
from lab.errors import LabError
from lab.evidence.records.exploration import summary_fails
from lab.evidence.records.text import NotJsonNumber, refuse_constant
from lab.scenarios.loader import BrokenScenario
from lab.scenarios.runner import Check, ScenarioResult, Verdict

FORMAT = "concurrency-lab-evidence/1"
"""The format name and version ``run.json`` carries; an auditor refuses formats it does not know."""


def dump_json(value: Json) -> bytes:
    """Canonical JSON bytes: sorted keys, two-space indent, UTF-8, a trailing newline."""
    return (json.dumps(value, sort_keys=True, ensure_ascii=False, indent=2) + "\n").encode("utf-8")


class DuplicateKey(LabError, ValueError):
    """An object names one key twice: Python's reader keeps the last value, another reader may keep the first, so
    such a record says two things at once (``"status": "FAIL"`` read by one, ``"PASS"`` by the other)."""


def unique_keys(pairs: list[tuple[str, Json]]) -> dict[str, Json]:
    """The ``object_pairs_hook`` of every JSON read from a folder or a child: it raises :class:`DuplicateKey`."""
    made = dict(pairs)
    if len(made) != len(pairs):  # the rare case pays for finding which key
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise DuplicateKey(f"names the key {json.dumps(key, ensure_ascii=True)[:60]} twice in one object")
            seen.add(key)
    return made


def parse_json(data: bytes) -> Json:
    """Parse JSON bytes, or raise ``ValueError`` whose message says in one line what is wrong with them; an object
    with a key twice is refused (:class:`DuplicateKey`), whichever value a reader would keep."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise ValueError(f"is not UTF-8 (byte 0x{data[error.start]:02x} at offset {error.start})") from None
    try:
        return json.loads(text, parse_constant=refuse_constant, object_pairs_hook=unique_keys)
    except DuplicateKey as error:  # before ValueError, which it subclasses
        raise ValueError(f"is not usable JSON: it {error}") from None
    except NotJsonNumber as error:  # before ValueError, which it subclasses
        raise ValueError(f"is not valid JSON: {error}") from None
    except json.JSONDecodeError as error:  # before ValueError, which it subclasses
        # a string cannot hold a raw newline, so an unterminated one runs into the end of the file
        if error.pos >= len(text.rstrip()) or error.msg.startswith("Unterminated string"):
            raise ValueError(f"is truncated: the JSON ends early at line {error.lineno}") from None
        raise ValueError(f"is not valid JSON: {error.msg} at line {error.lineno} column {error.colno}") from None
    except RecursionError:
        raise ValueError("nests JSON too deeply to be read") from None
    except ValueError as error:  # an integer too long to convert, for one
        raise ValueError(f"is not usable JSON: {str(error).splitlines()[0]}") from None


def same_json(one: object, two: object) -> bool:
    """Equal as JSON: ``true`` is not ``1`` and ``1.0`` is not ``1`` here, as they are for Python's ``==``."""
    return json.dumps(one, sort_keys=True) == json.dumps(two, sort_keys=True)


def sha256(data: bytes) -> str:
    """Hex SHA-256 of ``data``."""
    return hashlib.sha256(data).hexdigest()


def request_lines(requests: Sequence[bytes]) -> bytes:
    """``requests.jsonl``: each request body exactly as sent, then a newline."""
    return b"".join(body + b"\n" for body in requests)


def result_fields(result: ScenarioResult) -> dict[str, Json]:
    """The fields of a result that are plain values, the same in ``result.json`` and in the report a scenario's
    worker process sends (:mod:`lab.evidence.reexecute.isolation`): one list, so a new field reaches both."""
    return {
        "name": result.name,
        "lesson": result.lesson,
        "description": result.description,
        "source": result.source,
        "mutant": result.mutant,
        "verdict": str(result.verdict),
        "run_status": result.run_status,
        # how the runner was asked to run it, so re-execution can ask the same
        "variant": str(result.variant),
        "granularity": str(result.granularity),
        "expect": dict(result.expect),
        "outcomes": dict(result.outcomes),
        "state": dict(result.state),
        "transport_calls": result.transport_calls,
        "problem": result.problem,
        "store": result.store,
    }


def result_record(result: ScenarioResult, trace: bytes, requests: bytes, *, root: Path | None = None) -> Json:
    """``result.json`` for one scenario; ``trace`` and ``requests`` are the bytes of its two JSON Lines files.

    Tracebacks in ``errors`` name files relative to ``root``, so the record does not depend on where the
    checkout lives.
    """
    prefix = f"{root}/" if root is not None else ""
    return {
        **result_fields(result),
        "actors": list(result.outcomes),
        "checks": [
            {"name": c.name, "passed": c.passed, "reason": c.reason, "kind": getattr(c, "kind", "")}
            for c in result.checks
        ],
        "blocked": [{"actor": b.actor, "waits_for": b.waits_for} for b in result.blocked],
        "errors": {actor: text.replace(prefix, "") if prefix else text for actor, text in result.errors.items()},
        "requests": len(result.requests),
        "requests_sha256": sha256(requests) if result.requests else None,
        "trace_events": len(result.trace),
        "trace_sha256": sha256(trace),
        "timing": {"seconds": round(result.seconds, 6)},
    }


def result_from_record(
    record: Mapping[str, Any], trace: Sequence[TraceEvent], requests: Sequence[bytes] = ()
) -> ScenarioResult:
    """The :class:`ScenarioResult` a ``result.json`` record (and its trace and requests) was written from: the
    inverse of :func:`result_record`, for whoever must work from a folder's records as from the run (the audit
    rendering the reports again, a resumed run keeping a finished scenario). Records sort their keys; the run kept
    the actors' order, which the outcomes and errors get back."""
    actors = record["actors"]
    return ScenarioResult(
        name=record["name"],
        lesson=record["lesson"],
        description=record["description"],
        source=record["source"],
        mutant=record["mutant"],
        verdict=Verdict(record["verdict"]),
        run_status=record["run_status"],
        expect=record["expect"],
        outcomes=_in_actor_order(actors, record["outcomes"]),
        state=record["state"],
        checks=tuple(Check(c["name"], c["passed"], c["reason"], c.get("kind", "")) for c in record["checks"]),
        trace=tuple(trace),
        requests=tuple(requests),
        transport_calls=record["transport_calls"],
        blocked=tuple(BlockedActor(b["actor"], b["waits_for"]) for b in record["blocked"]),
        errors=_in_actor_order(actors, record["errors"]),
        problem=record["problem"],
        seconds=float(record["timing"]["seconds"]),
        variant=record["variant"],
        granularity=record["granularity"],
        store=record["store"],
    )


def _in_actor_order(actors: Sequence[str], values: Mapping[str, Any]) -> dict[str, Any]:
    """``values`` in declaration order, then the rest."""
    return {**{a: values[a] for a in actors if a in values}, **{k: v for k, v in values.items() if k not in actors}}


def started_record(started: datetime, command: Sequence[str] | None = None) -> Json:
    """``started.json``: the format, when the run began (UTC), and the command that began it, when known."""
    record: dict[str, Json] = {"format": FORMAT, "started": _utc(started)}
    if command is not None:
        record["command"] = list(command)
    return record


def run_record(
    results: Sequence[ScenarioResult],
    broken: Sequence[BrokenScenario],
    *,
    version: str,
    command: Sequence[str],
    started: datetime,
    ended: datetime,
    git: Mapping[str, Json] | None,
    exploration: Mapping[str, Json] | None = None,
) -> Json:
    """``run.json``: what ran, where, when, and the totals an auditor re-adds from the results.

    ``exploration`` is the summary of the run's explorations (:func:`lab.evidence.records.exploration.summary_record`),
    recorded only when the run explored; it can turn the status to FAIL (:func:`~lab.evidence.records.exploration.
    summary_fails`).
    """
    verdicts = {str(verdict): sum(r.verdict is verdict for r in results) for verdict in Verdict}
    explore_fails = exploration is not None and summary_fails(exploration)
    status = run_status([str(r.verdict) for r in results], broken=bool(broken), explore_fails=explore_fails)
    record: dict[str, Json] = {
        "format": FORMAT,
        "lab_version": version,
        "command": list(command),
        "python": {"implementation": platform.python_implementation(), "version": platform.python_version()},
        "platform": platform.platform(),
        "started": _utc(started),
        "ended": _utc(ended),
        "duration_seconds": round((ended - started).total_seconds(), 6),
        "scenario_count": len(results),
        "scenarios": [result.name for result in results],
        "checks": {"passed": sum(r.checks_passed for r in results), "failed": sum(r.checks_failed for r in results)},
        "verdicts": verdicts,
        "broken": [{"name": b.name, "file": b.path.name, "problem": b.problem} for b in broken],
        "transport_calls": sum(result.transport_calls for result in results),
        "network_requests": 0,
        "status": status,
        "git": dict(git) if git is not None else None,
    }
    if exploration is not None:
        record["exploration"] = dict(exploration)
    return record


def run_status(verdicts: Sequence[str], *, broken: bool, explore_fails: bool) -> Verdict:
    """The run's status, the one rule the writer records and the auditor asks again: PASS when no scenario file is
    broken, every verdict is PASS or SKIPPED (a skipped scenario ran nothing) and exploration does not fail the run;
    else FAIL (the run's status uses two of the verdict words)."""
    passing = all(verdict in (Verdict.PASS, Verdict.SKIPPED) for verdict in verdicts)
    return Verdict.PASS if passing and not broken and not explore_fails else Verdict.FAIL


def _utc(moment: datetime) -> str:
    return moment.astimezone(UTC).isoformat(timespec="microseconds").replace("+00:00", "Z")
