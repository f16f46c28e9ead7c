# size: one comparison of a re-executed run with its record, field by field (child protocol, results, traces)
"""Re-execution: run every scenario again and compare, here, with what was recorded.

Two halves of one protocol live here. :func:`rerun` (the auditor's side) starts a child interpreter
(:mod:`lab.evidence.reexecute.child`) running one of two kinds of code: the auditing checkout's own, when every
archived file that would run is identical to it, or, asked for with ``--execute-archive``, a temporary copy of the
archived code, with a scrubbed environment and resource limits. :func:`main` (the child's side) reads the request as
JSON on stdin, runs the scenarios, and prints one JSON report on stdout: for each scenario its trace and requests as
text, its outcomes, verdict and run status, and where ``lab`` was imported from, so the auditor can prove which code
ran. The child's own digests are never trusted: the auditor hashes the text it printed and compares everything
itself.

Each scenario is re-run the way it first ran: with the variant and granularity its result records, and, if it
hung, with the watchdog its trace recorded, so it hangs the same way. When the folder holds explorations, the same
child also explores them again and rebuilds the kill matrix (:mod:`lab.evidence.reexecute.reexplore`); the request
carries them only then, so the protocol for a folder without exploration is unchanged. The whole child is bounded
by a timeout.
"""

from __future__ import annotations

import contextlib
import json
import math
import sys
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from lab.engine.core import RunStatus, TraceEvent
from lab.evidence.records.findings import Problem, Rerun, RerunStatus
from lab.evidence.records.layout import (
    SOURCES,
    requests_path,
    result_path,
    scenario_dir,
    scenario_source_path,
    source_path,
    trace_path,
)
from lab.evidence.records.plan import ScenarioFacts
from lab.evidence.records.records import request_lines, result_record, same_json, sha256, unique_keys
from lab.evidence.records.schema import is_name
from lab.evidence.records.text import first_difference, refuse_constant, shown
from lab.evidence.reexecute.child import Code, Running, run_child, start_child
from lab.evidence.reexecute.namespace import isolation_note, pid_namespace
from lab.evidence.reexecute.reexplore import (
    ExpectedExploration,
    allowance,
    compare_exploration,
    compare_kill_matrix,
    kill_matrix_request,
)

PROTOCOL = 1
NOTHING_TO_RERUN = "no scenario to re-execute"
"""The note of a re-execution of a folder without scenarios or explorations."""
BASE_TIMEOUT_SECONDS = 60.0
CHECKOUT = "the auditing checkout"
ARCHIVE = "the archived sources"
_WHERE = {
    CHECKOUT: "with the auditing checkout's code (identical to sources/)",
    ARCHIVE: "from the archived sources/ (--execute-archive)",
}


@dataclass(frozen=True, slots=True)
class Expected:
    """What one scenario's re-execution must reproduce, from its archived records."""

    name: str
    trace: bytes | None
    trace_sha256: str
    requests_sha256: str | None
    outcomes: Mapping[str, str]
    verdict: str
    run_status: str
    watchdog_seconds: float | None = None
    options: Mapping[str, str] = field(default_factory=dict)
    result: Mapping[str, Any] | None = None
    """The whole ``result.json``: every field but its ``timing`` must come out of the re-execution the same, as
    JSON (its lesson, checks, expected outcomes, state, errors, ...: the words a report shows, not only the verdict)."""


MAX_HANG_WATCHDOG = 3600.0
"""The longest recorded watchdog a re-execution waits for (``run.py --watchdog`` accepts no more)."""


def expected_of(
    name: str, result: Mapping[str, Any], trace: bytes | None, events: Sequence[TraceEvent] | None
) -> Expected:
    """What re-executing one scenario must reproduce, from its ``result.json`` (parsed and checked), its
    ``trace.jsonl`` bytes and their events (``None`` where unusable): a hang is re-run with the watchdog its trace
    recorded, so it hangs the same way. The auditor makes it from the folder; the writer, from the same records
    before it writes them (:func:`prestart`)."""
    hangs = [e.detail.get("watchdog_seconds") for e in events or () if e.op == "hang"]
    watchdog = hangs[0] if hangs and _is_watchdog(hangs[0]) else None
    return Expected(
        name=name,
        trace=trace,
        trace_sha256=sha256(trace) if trace is not None else result["trace_sha256"],
        requests_sha256=result["requests_sha256"],
        outcomes=result["outcomes"],
        verdict=result["verdict"],
        run_status=result["run_status"],
        watchdog_seconds=float(watchdog) if watchdog is not None else None,
        options={"variant": result["variant"], "granularity": result["granularity"]},
        result=result,
    )


def _is_watchdog(value: object) -> bool:
    """A recorded watchdog worth waiting for: seconds, finite, positive, at most :data:`MAX_HANG_WATCHDOG`."""
    return (
        isinstance(value, int | float)
        and not isinstance(value, bool)
        and math.isfinite(value)
        and 0 < value <= MAX_HANG_WATCHDOG
    )


def default_timeout(
    expected: Sequence[Expected],
    explorations: Sequence[ExpectedExploration] = (),
    kill_matrix: Mapping[str, Any] | None = None,
) -> float:
    """A bound for the whole child: generous for ordinary runs, plus each recorded hang's watchdog and grace, plus
    a bounded allowance for re-exploration (:func:`lab.evidence.reexecute.reexplore.allowance`)."""
    hangs = sum((e.watchdog_seconds or 0.0) + 5.0 for e in expected if e.run_status == RunStatus.HUNG)
    explored = allowance(explorations, kill_matrix) if explorations or kill_matrix is not None else 0.0
    return BASE_TIMEOUT_SECONDS + hangs + explored


def request_for(
    expected: Sequence[Expected],
    *,
    explorations: Sequence[ExpectedExploration] = (),
    kill_matrix: Mapping[str, Any] | None = None,
    describe: Sequence[str] = (),
) -> bytes:
    """The child's request: the bytes on its standard input, made from what it must re-execute."""
    request: dict[str, Any] = {
        "protocol": PROTOCOL,
        "scenarios": [{"name": e.name, "watchdog_seconds": e.watchdog_seconds, **e.options} for e in expected],
    }
    if explorations:
        request["explorations"] = [item.request() for item in explorations]
    if kill_matrix is not None:
        request["kill_matrix"] = kill_matrix_request(kill_matrix)
    if describe:
        request["describe"] = list(describe)
    return json.dumps(request).encode("utf-8")


def prestart(
    code: Code,
    expected: Sequence[Expected],
    *,
    explorations: Sequence[ExpectedExploration] = (),
    kill_matrix: Mapping[str, Any] | None = None,
    describe: Sequence[str] = (),
    python: str = sys.executable,
) -> Running | None:
    """Start, now, the child :func:`rerun` would start for the same arguments, so it works while the caller does
    something else; ``None`` when there is nothing to re-execute or it could not start. Passed to :func:`rerun` as
    ``started``, it is used only if it is exactly that child (same code, request and limit), else ended."""
    if not expected and not explorations and kill_matrix is None:
        return None
    request = request_for(expected, explorations=explorations, kill_matrix=kill_matrix, describe=describe)
    started = start_child(code, request, default_timeout(expected, explorations, kill_matrix), python)
    return started if isinstance(started, Running) else None


def rerun(
    code: Code,
    expected: Sequence[Expected],
    *,
    explorations: Sequence[ExpectedExploration] = (),
    kill_matrix: Mapping[str, Any] | None = None,
    timeout: float | None = None,
    python: str = sys.executable,
    describe: Sequence[str] = (),
    started: Running | None = None,
) -> tuple[Rerun, list[Problem], dict[str, ScenarioFacts] | None]:
    """Re-execute ``expected`` with ``code``, and explore ``explorations`` and rebuild ``kill_matrix`` (its record)
    again; the summary, one problem per difference, and what each scenario file declares (those re-executed and
    those in ``describe``; ``None`` when the code does not say). The child only reports what it ran: every
    comparison, every digest included, is made here, by the auditor. ``started``: a child :func:`prestart` began,
    used if it is the very child this call would start (and ended either way)."""
    if not expected and not explorations and kill_matrix is None:
        if started is not None:
            started.close()
        return Rerun(RerunStatus.SKIPPED, NOTHING_TO_RERUN), [], None
    limit = default_timeout(expected, explorations, kill_matrix) if timeout is None else timeout
    request = request_for(expected, explorations=explorations, kill_matrix=kill_matrix, describe=describe)
    what = _what(len(expected), len(explorations), kill_matrix is not None)
    begun = time.perf_counter()
    if started is not None and started.matches(code, request, limit):
        begun = started.began
        done = started.result()
    else:
        if started is not None:
            started.close()
        done = run_child(code, request, limit, python)
    seconds = time.perf_counter() - begun

    where = f"; the archived code ran {isolation_note(bool(pid_namespace()))}" if code.sandboxed else ""

    def summary(status: RerunStatus, note: str) -> Rerun:
        return Rerun(status, note + where, len(expected), seconds, len(explorations), code.label)

    if isinstance(done, str):
        return summary(RerunStatus.FAILED, done), [Problem(SOURCES, done)], None
    report, problems = _read_report(done.stdout, code)
    if report is None:
        return summary(RerunStatus.FAILED, problems[0].reason), problems, None
    facts = _facts(report.get("facts")) if describe else None
    for item in expected:
        problems.extend(_compare(item, report["results"].get(item.name)))
    if any(isinstance(got, dict) and "trace" in got and "record" not in got for got in report["results"].values()):
        problems.append(
            Problem(
                source_path("lab/evidence/reexecute/rerun.py"),
                "the re-executed code does not report whole results, so their lessons, checks, expected outcomes, "
                "state and errors could not be compared with result.json",
            )
        )
    if (explorations or kill_matrix is not None) and not isinstance(report.get("explorations"), list):
        problems.append(
            Problem(
                source_path("lab/evidence/reexecute/rerun.py"),
                "the re-executed code does not re-explore, but the folder holds explorations",
            )
        )
    else:
        fresh = report.get("explorations") or []
        for index, exploration in enumerate(explorations):
            problems.extend(compare_exploration(exploration, fresh[index] if index < len(fresh) else None))
        if kill_matrix is not None:
            problems.extend(compare_kill_matrix(kill_matrix, report.get("kill_matrix")))
    if problems:
        note = f"{len(problems)} differences in {what} re-executed {_WHERE[code.label]}"
        return summary(RerunStatus.DIFFERED, note), problems, facts
    note = matched_note(len(expected), len(explorations), kill_matrix is not None, code.label)
    return summary(RerunStatus.MATCHED, note), [], facts


def matched_note(scenarios: int, explorations: int, kill_matrix: bool, label: str) -> str:
    """The note of a re-execution that reproduced everything: the one sentence the self-audit records and an audit
    derives again (:mod:`lab.evidence.verify.self_audit`)."""
    what = _what(scenarios, explorations, kill_matrix)
    return f"{what} re-executed {_WHERE[label]}: " + "; ".join(
        [
            *(["byte-identical traces, same outcomes and verdicts"] if scenarios else []),
            *(["the same verdicts, counts, rows and counterexamples"] if explorations else []),
            *(["the same kill-matrix cells"] if kill_matrix else []),
        ]
    )


def _facts(reported: object) -> dict[str, ScenarioFacts] | None:
    """What the child says each scenario file declares; ``None`` from code that does not say (an older archive)."""
    if not isinstance(reported, dict):
        return None
    facts = {}
    for name, said in reported.items():
        if (
            isinstance(said, dict)
            and isinstance(said.get("variants"), list)
            and all(isinstance(v, str) for v in said["variants"])
            and isinstance(said.get("pinned"), bool)
        ):
            facts[str(name)] = ScenarioFacts(tuple(said["variants"]), said["pinned"])
    return facts


def _what(scenarios: int, explorations: int, kill_matrix: bool) -> str:
    parts = [f"{scenarios} scenarios"] if scenarios or not (explorations or kill_matrix) else []
    parts += [f"{explorations} explorations"] if explorations else []
    parts += ["the kill matrix"] if kill_matrix else []
    return parts[0] if len(parts) == 1 else ", ".join(parts[:-1]) + " and " + parts[-1]


def _read_report(output: bytes, code: Code) -> tuple[dict[str, Any] | None, list[Problem]]:
    try:
        report = json.loads(output.decode("utf-8"), parse_constant=refuse_constant, object_pairs_hook=unique_keys)
    except (ValueError, RecursionError):  # not UTF-8, not JSON
        return None, [Problem(SOURCES, "re-execution did not print its JSON report")]
    if (
        not isinstance(report, dict)
        or report.get("protocol") != PROTOCOL
        or not isinstance(report.get("results"), dict)
    ):
        return None, [Problem(SOURCES, f"re-execution printed a report that is not protocol {PROTOCOL}")]
    origin = report.get("lab")
    if not isinstance(origin, str) or not Path(origin).resolve().is_relative_to(code.root.resolve()):
        return None, [Problem(source_path("lab"), f"re-execution imported lab from {origin!r}, not from {code.label}")]
    return report, []


def _compare(item: Expected, got: object) -> list[Problem]:
    if not isinstance(got, dict):
        return [Problem(scenario_dir(item.name), "re-execution returned nothing for this scenario")]
    if "broken" in got:
        return [Problem(scenario_source_path(item.name), f"does not load when re-executed: {got['broken']}")]
    problems = []
    trace = got.get("trace")
    printed = _encoded(trace)
    if printed is None or sha256(printed) != item.trace_sha256:
        problems.append(
            Problem(trace_path(item.name), "re-execution gave a different trace" + _first_difference(item.trace, trace))
        )
    if _requests_digest(got) != item.requests_sha256:
        problems.append(Problem(requests_path(item.name), "re-execution sent different requests"))
    for key, recorded in (
        ("outcomes", dict(item.outcomes)),
        ("verdict", item.verdict),
        ("run_status", item.run_status),
    ):
        if not same_json(got.get(key), recorded):
            problems.append(
                Problem(
                    result_path(item.name),
                    f"re-execution gave {key} {shown(got.get(key), 100)}; recorded {shown(recorded, 100)}",
                )
            )
    fresh = got.get("record")
    if item.result is not None and isinstance(fresh, dict):
        for key in sorted((item.result.keys() | fresh.keys()) - _COMPARED_APART):
            if (
                key in item.result
                and key in fresh
                and same_json(*(_comparable(key, m[key]) for m in (fresh, item.result)))
            ):
                continue
            problems.append(
                Problem(result_path(item.name), "re-execution gave " + _difference(key, fresh, item.result))
            )
    return problems


def _comparable(key: str, value: object) -> object:
    """``value`` as it is compared: ``errors`` by each actor's exception, the last line of its traceback, since
    the frames above it name files outside the checkout (the standard library's) by their absolute path, and those
    differ between machines; every other field as it is."""
    if key != "errors" or not isinstance(value, dict):
        return value
    return {actor: _last_line(text) for actor, text in value.items()}


def _last_line(text: object) -> object:
    if not isinstance(text, str):
        return text
    lines = [line for line in text.splitlines() if line.strip()]
    return lines[-1] if lines else ""


def _difference(key: str, fresh: Mapping[str, Any], recorded: Mapping[str, Any]) -> str:
    """How field ``key`` differs, in words: the first item that differs when both are lists."""
    if key not in fresh or key not in recorded:
        again, was = (shown(side[key], 100) if key in side else "no such field" for side in (fresh, recorded))
        return f"{key} {again}; recorded {was}"
    again, was = fresh[key], recorded[key]
    if isinstance(again, list) and isinstance(was, list):
        pairs = list(zip(again, was, strict=False))
        index = next((i for i, (a, b) in enumerate(pairs) if not same_json(a, b)), None)
        if index is not None:
            return f"{key} item {index + 1} {shown(again[index], 100)}; recorded {shown(was[index], 100)}"
        return f"{len(again)} {key}; recorded {len(was)}"
    return f"{key} {shown(again, 100)}; recorded {shown(was, 100)}"


_COMPARED_APART = frozenset({"timing", "outcomes", "verdict", "run_status", "trace_sha256", "requests_sha256"})
"""Fields of ``result.json`` the whole-record comparison leaves out: ``timing`` (the clock), and those compared
above, or against the files, on their own."""


def _requests_digest(got: dict[str, Any]) -> object:
    """The digest of the requests the child sent, made here from the bytes it printed; a child from before it
    printed them (an archive, under ``--execute-archive``) gives only its own digest."""
    if "requests" not in got:
        return got.get("requests_sha256")
    printed = _encoded(got["requests"])
    return (sha256(printed) if printed else None) if printed is not None else "(not text)"


def _encoded(text: object) -> bytes | None:
    """The bytes a child meant by ``text`` (undecodable bytes travel as surrogate escapes), or ``None``."""
    if not isinstance(text, str):
        return None
    try:
        return text.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:  # a surrogate no decoder makes: the child made it up
        return None


def _first_difference(archived: bytes | None, fresh: object) -> str:
    if archived is None or not isinstance(fresh, str):
        return ""
    old, new = archived.decode("utf-8", "replace").splitlines(), fresh.splitlines()
    found = first_difference(old, new)
    if found is None:
        return f": recorded {len(old)} events, re-run {len(new)}"
    number, a, b = found
    return f": first difference at line {number}: recorded {shown(a, 100)}, re-run {shown(b, 100)}"


def main() -> int:
    """The child's side: read the request on stdin, run each scenario, print the JSON report on stdout.

    Scenario code that prints is sent to stderr, so stdout carries only the report. Each scenario runs in a worker
    process of its own, as ``run.py`` ran it (:mod:`lab.evidence.reexecute.isolation`), so what one does cannot change
    another's re-execution, and a scenario its worker could not report on is the same ERROR again.
    """
    import lab
    from lab.engine.core import DEFAULT_WATCHDOG_SECONDS, encode_trace
    from lab.evidence.reexecute.isolation import Job, run_jobs
    from lab.scenarios import compile_ahead
    from lab.scenarios.loader import BrokenScenario

    request = json.loads(sys.stdin.read())
    home = Path(lab.__file__).resolve().parent
    results: dict[str, Any] = {}
    explored: dict[str, Any] = {}
    with contextlib.redirect_stdout(sys.stderr):
        jobs: list[tuple[str, Job]] = []
        for item in request["scenarios"]:
            name = item["name"]
            if not is_name(name):
                results[str(name)] = {"broken": "not a scenario name"}
                continue
            watchdog = item.get("watchdog_seconds") or DEFAULT_WATCHDOG_SECONDS
            options = {key: item[key] for key in ("variant", "granularity") if item.get(key) not in {None, "", "probe"}}
            jobs.append((name, Job(home.parent / "scenarios" / f"{name}.py", watchdog, **options)))
        running = {name for name, _ in jobs}
        for name in request.get("describe") or ():
            if is_name(name) and name not in running:
                jobs.append((name, Job(home.parent / "scenarios" / f"{name}.py", 1.0, describe=True)))
        facts: dict[str, Any] = {}
        compile_ahead(job.path for _, job in jobs)  # this child is contained: it may compile what its workers load
        for (name, _), ran in zip(jobs, run_jobs([job for _, job in jobs]), strict=True):
            if ran.facts is not None:
                facts[name] = {"variants": list(ran.facts.variants), "pinned": ran.facts.pinned}
            result = ran.outcome
            if result is None or name not in running:
                continue
            if isinstance(result, BrokenScenario):
                results[name] = {"broken": result.problem}
                continue
            trace = encode_trace(result.trace)
            record = result_record(result, trace, request_lines(result.requests), root=home.parent)
            assert isinstance(record, dict)
            results[name] = {
                "trace": trace.decode("utf-8"),
                "trace_sha256": sha256(trace),
                "requests_sha256": sha256(request_lines(result.requests)) if result.requests else None,
                "requests": request_lines(result.requests).decode("utf-8", "surrogateescape"),
                "outcomes": dict(result.outcomes),
                "verdict": str(result.verdict),
                "run_status": result.run_status,
                "record": {key: value for key, value in record.items() if key != "timing"},
            }
        if request.get("explorations") or request.get("kill_matrix") is not None:
            from lab.evidence.reexecute.reexplore import reexplore

            explored = reexplore(home.parent, request)
    sys.stdout.write(
        json.dumps(
            {"protocol": PROTOCOL, "lab": str(home / "__init__.py"), "results": results, "facts": facts, **explored}
        )
    )
    sys.stdout.flush()
    return 0
