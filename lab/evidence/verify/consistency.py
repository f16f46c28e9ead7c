# size: one pass that checks every record of a folder against the others and against its own trace
"""Consistency: every record parses, has its fields, and agrees with the others and with its own trace.

These cross-checks are what catch a tamper that rewrote ``SHA256SUMS`` to cover its tracks: an outcome edited in a
trace no longer matches ``result.json`` (nor its ``trace_sha256``), a total edited in ``run.json`` no longer
equals the sum of the results. Each record is read once, bounded in size, through the folder reader.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from lab.engine.core import TraceEvent
from lab.evidence.records.findings import Problem
from lab.evidence.records.layout import (
    AUDIT,
    OPTIONAL_FILES,
    REPORT_HTML,
    REPORT_MD,
    RUN,
    SOURCES,
    STARTED,
    SUMS,
    TOP_FILES,
    parse_scenario_path,
    requests_path,
    result_path,
    scenario_dir,
    trace_path,
)
from lab.evidence.records.loading import LINES_CAP, load_record
from lab.evidence.records.loading import read_file as _read
from lab.evidence.records.records import FORMAT, run_status, same_json, sha256
from lab.evidence.records.safefs import FolderReader, printable
from lab.evidence.records.schema import (
    AUDIT_FIELDS,
    AUDIT_OPTIONAL,
    CHECK_FIELDS,
    CHECK_OPTIONAL,
    RESULT_FIELDS,
    RESULT_OPTIONAL,
    RUN_FIELDS,
    RUN_OPTIONAL,
    STARTED_FIELDS,
    STARTED_OPTIONAL,
)
from lab.evidence.records.text import shown
from lab.evidence.verify.explore_checks import ExplorationEvidence, check_exploration, is_exploration_file
from lab.evidence.verify.traces import check_against_trace, parse_trace
from lab.scenarios.results import NOT_RUN
from lab.scenarios.runner import Verdict


@dataclass(frozen=True, slots=True)
class ScenarioEvidence:
    """What the folder holds for one scenario; ``None`` where a file is missing, unreadable or malformed."""

    name: str
    result: Mapping[str, Any] | None
    trace: bytes | None
    events: tuple[TraceEvent, ...] | None


@dataclass(frozen=True, slots=True)
class Evidence:
    """The records that parsed, for the checks that come after (re-execution)."""

    run: Mapping[str, Any] | None
    scenarios: tuple[ScenarioEvidence, ...]
    exploration: ExplorationEvidence
    report: bytes | None = None
    """``report.md``, when it could be read as UTF-8 (:mod:`lab.evidence.verify.rederive` renders it again)."""
    report_html: bytes | None = None
    """``report.html``, likewise; ``None`` also for an older folder written without one."""
    audit: Mapping[str, Any] | None = None
    """``audit.json``, when it parsed (:mod:`lab.evidence.verify.self_audit` derives each of its fields again)."""


def check_consistency(
    reader: FolderReader, listing: Mapping[str, str], problems: list[Problem], *, self_audit: bool = False
) -> Evidence:
    """Check the layout, every record, and the records against each other; return what parsed."""
    _check_layout(listing, problems, self_audit=self_audit)
    run = load_record(reader, listing, RUN, RUN_FIELDS, problems, RUN_OPTIONAL)
    if run is not None:
        _check_known(RUN, run, {*RUN_FIELDS, *RUN_OPTIONAL}, problems)
    if run is not None and run["format"] != FORMAT:
        problems.append(
            Problem(RUN, f"format {printable(str(run['format']))!r} is not {FORMAT!r}, the one this auditor reads")
        )
        run = None
    names = list(dict.fromkeys([*(run["scenarios"] if run is not None else []), *_scenario_folders(listing)]))
    scenarios = tuple(_check_scenario(reader, listing, name, problems) for name in names)
    explored = check_exploration(reader, listing, run, {s.name: s.result for s in scenarios}, problems)
    if run is not None:
        _check_run(run, scenarios, listing, problems, explore_fails=explored.fails)
    if STARTED in listing:
        _check_started(reader, listing, problems, run)
    recorded_audit = None if self_audit else _check_audit(reader, listing, problems)
    report = _read(reader, REPORT_MD, LINES_CAP, problems, text=True) if REPORT_MD in listing else None
    page = _read(reader, REPORT_HTML, LINES_CAP, problems, text=True) if REPORT_HTML in listing else None
    return Evidence(run, scenarios, explored, report, page, recorded_audit)


def _check_layout(listing: Mapping[str, str], problems: list[Problem], *, self_audit: bool) -> None:
    for rel in listing:
        if rel in TOP_FILES or rel in OPTIONAL_FILES or rel.startswith(SOURCES):
            continue
        if parse_scenario_path(rel) is not None or is_exploration_file(rel):
            continue
        problems.append(Problem(printable(rel), "is not part of an evidence folder (see docs/evidence.md)"))
    later = {RUN, SUMS, AUDIT} if self_audit else {RUN, SUMS}  # reported elsewhere, or later
    problems.extend(
        Problem(name, "missing: every evidence folder has one")
        for name in TOP_FILES
        if name not in later and name not in listing
    )


def _check_known(
    rel: str, record: Mapping[str, Any], known: set[str], problems: list[Problem], *, within: str = ""
) -> None:
    """A record holds the fields of its table and no other (docs/evidence.md): a field the lab never writes says
    something no check reads."""
    for key in sorted(record.keys() - known):
        problems.append(
            Problem(rel, f"{within + ' has' if within else 'has'} a field the lab never writes: {shown(key)}")
        )


def _scenario_folders(listing: Mapping[str, str]) -> list[str]:
    return sorted({where[0] for where in map(parse_scenario_path, listing) if where is not None})


def _check_scenario(
    reader: FolderReader, listing: Mapping[str, str], name: str, problems: list[Problem]
) -> ScenarioEvidence:
    result_rel, trace_rel = result_path(name), trace_path(name)
    result = load_record(reader, listing, result_rel, RESULT_FIELDS, problems, RESULT_OPTIONAL)
    trace = _read(reader, trace_rel, LINES_CAP, problems) if trace_rel in listing else None
    if trace_rel not in listing:
        problems.append(Problem(trace_rel, "missing: every scenario has a trace"))
    events = parse_trace(trace, trace_rel, problems) if trace is not None else None
    if result is not None:
        _check_known(result_rel, result, {*RESULT_FIELDS, *RESULT_OPTIONAL}, problems)
        for check in result["checks"]:
            _check_known(result_rel, check, {*CHECK_FIELDS, *CHECK_OPTIONAL}, problems, within="a check")
        if result["name"] != name:
            problems.append(
                Problem(result_rel, f"names scenario {printable(result['name'])!r}, but it is in {scenario_dir(name)}/")
            )
        _check_requests(reader, listing, name, result, problems)
        _check_verdict(result_rel, result, problems)
        if trace is not None and result["trace_sha256"] != sha256(trace):
            problems.append(Problem(trace_rel, "does not match the trace_sha256 in result.json"))
        if events is not None:
            check_against_trace(name, result, events, problems)
    return ScenarioEvidence(name, result, trace, tuple(events) if events is not None else None)


def _check_requests(
    reader: FolderReader, listing: Mapping[str, str], name: str, result: Mapping[str, Any], problems: list[Problem]
) -> None:
    rel, count = requests_path(name), result["requests"]
    if count == 0:
        if rel in listing:
            problems.append(Problem(rel, "exists, but result.json says the scenario sent no requests"))
        if result["requests_sha256"] is not None:
            problems.append(Problem(result_path(name), "has a requests_sha256 but 0 requests"))
        return
    if rel not in listing:
        problems.append(Problem(rel, f"missing: result.json says the scenario sent {count} requests"))
        return
    data = _read(reader, rel, LINES_CAP, problems)
    if data is None:
        return
    lines = data.split(b"\n")
    if lines[-1]:
        problems.append(Problem(rel, "the last line does not end with a newline: the file is truncated"))
    if len(lines) - 1 != count:
        problems.append(Problem(rel, f"has {len(lines) - 1} lines, but result.json says {count} requests"))
    if result["requests_sha256"] != sha256(data):
        problems.append(Problem(rel, "does not match the requests_sha256 in result.json"))


def _check_verdict(rel: str, result: Mapping[str, Any], problems: list[Problem]) -> None:
    failed = sum(not check["passed"] for check in result["checks"])
    verdict = result["verdict"]
    if verdict == Verdict.SKIPPED:  # it ran nothing, so it has no checks, and it says why
        if result["checks"] or result["run_status"] != NOT_RUN or not result["problem"]:
            problems.append(
                Problem(rel, "verdict is SKIPPED, but it has checks, a run status other than NOT_RUN, or no reason")
            )
        return
    if verdict == Verdict.PASS and (failed or not result["checks"]):
        problems.append(Problem(rel, f"verdict is PASS, but {failed} of {len(result['checks'])} checks failed"))
    elif verdict != Verdict.PASS and not failed:
        problems.append(Problem(rel, f"verdict is {verdict}, but every check passed"))


def _check_run(
    run: Mapping[str, Any],
    scenarios: Sequence[ScenarioEvidence],
    listing: Mapping[str, str],
    problems: list[Problem],
    *,
    explore_fails: bool | None,
) -> None:
    for line in run.get("sources_changed", ()):  # the run's own word: what ran is the archive, but not the checkout
        problems.append(Problem(RUN, f"the sources changed while the run went on: {printable(line)}"))
    listed, folders = run["scenarios"], set(_scenario_folders(listing))
    if run["scenario_count"] != len(listed):
        problems.append(
            Problem(RUN, f"scenario_count is {run['scenario_count']}, but it lists {len(listed)} scenarios")
        )
    for name in listed:
        if name not in folders:
            problems.append(Problem(scenario_dir(name), "missing: run.json lists this scenario"))
    for name in sorted(folders - set(listed)):
        problems.append(Problem(scenario_dir(name), "is not listed in run.json"))
    _check_times(run, problems)
    results = [s.result for s in scenarios if s.name in listed]
    if len(listed) != len(set(listed)) or any(r is None for r in results):
        return  # totals are only comparable when every listed result could be read
    checks = [check for result in results if result is not None for check in result["checks"]]
    totals = {"passed": sum(c["passed"] for c in checks), "failed": sum(not c["passed"] for c in checks)}
    if run["checks"] != totals:
        problems.append(
            Problem(
                RUN,
                f"checks say {run['checks'].get('passed')} passed and "
                f"{run['checks'].get('failed')} failed, but the results add up to "
                f"{totals['passed']} and {totals['failed']}",
            )
        )
    verdicts = [r["verdict"] for r in results if r is not None]
    # folders written before SKIPPED existed neither count it nor have one
    words = [word for word in Verdict if word is not Verdict.SKIPPED or word in run["verdicts"] or word in verdicts]
    counted = {str(word): verdicts.count(word) for word in words}
    if not same_json(run["verdicts"], counted):
        problems.append(Problem(RUN, f"verdicts {shown(run['verdicts'])} differ from the results' {counted}"))
    calls = sum(r["transport_calls"] for r in results if r is not None)
    if run["transport_calls"] != calls:
        problems.append(Problem(RUN, f"transport_calls is {run['transport_calls']}, but the results add up to {calls}"))
    if explore_fails is None and run.get("exploration") is not None:
        return  # the exploration summary is unusable (reported): the status cannot be recomputed
    status = run_status(verdicts, broken=bool(run["broken"]), explore_fails=bool(explore_fails))  # the writer's rule
    if run["status"] != status:
        what = "results, broken files and exploration" if explore_fails is not None else "results and broken files"
        problems.append(Problem(RUN, f"status is {run['status']}, but the {what} make it {status}"))


def _check_times(run: Mapping[str, Any], problems: list[Problem]) -> None:
    """``started`` and ``ended`` are UTC times exactly as the lab writes them, and ``duration_seconds`` is the
    difference the lab records (rounded to microseconds, a number with a fraction)."""
    moments = [_utc_time(run[key]) for key in ("started", "ended")]
    started, ended = moments
    if started is None or ended is None:
        problems.append(
            Problem(RUN, "started or ended is not a UTC time written as the lab writes it (ISO 8601, microseconds, Z)")
        )
        return
    if ended < started:
        problems.append(Problem(RUN, "ended is before started"))
    duration = round((ended - started).total_seconds(), 6)
    if not same_json(run["duration_seconds"], duration):
        problems.append(
            Problem(RUN, f"duration_seconds is {shown(run['duration_seconds'])}, but ended - started is {duration}")
        )


def _utc_time(text: str) -> datetime | None:
    """The moment ``text`` names, if it is written the way :mod:`lab.evidence.records.records` writes one."""
    try:
        moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None
    if moment.tzinfo is None or moment.astimezone(UTC).isoformat(timespec="microseconds") != text.replace(
        "Z", "+00:00"
    ):
        return None
    return moment if text.endswith("Z") else None


def _check_started(
    reader: FolderReader, listing: Mapping[str, str], problems: list[Problem], run: Mapping[str, Any] | None
) -> None:
    """``started.json`` is read for its format, and the command that began the folder, which must be the one
    ``run.json`` records (``--resume`` compares with it): the library lets a caller make the folder at another moment
    than the one it records as ``run.json``'s ``started``, so those two need not agree."""
    record = load_record(reader, listing, STARTED, STARTED_FIELDS, problems, STARTED_OPTIONAL)
    if record is None:
        return
    _check_known(STARTED, record, {*STARTED_FIELDS, *STARTED_OPTIONAL}, problems)
    if "command" in record and run is not None and not same_json(record["command"], run["command"]):
        problems.append(Problem(STARTED, f"command is {shown(record['command'], 80)}, but run.json records another"))
    if record["format"] != FORMAT:
        problems.append(Problem(STARTED, f"format {printable(record['format'])!r} is not {FORMAT!r}"))
    if _utc_time(record["started"]) is None:
        problems.append(
            Problem(STARTED, "started is not a UTC time written as the lab writes it (ISO 8601, microseconds, Z)")
        )


def _check_audit(reader: FolderReader, listing: Mapping[str, str], problems: list[Problem]) -> Mapping[str, Any] | None:
    if AUDIT not in listing:
        return None  # the layout check reports it missing
    record = load_record(reader, listing, AUDIT, AUDIT_FIELDS, problems, AUDIT_OPTIONAL)
    if record is not None and not record["ok"]:
        found = record["problems"]
        first = f"; first: {found[0]['file']}: {found[0]['reason']}" if found else ""
        problems.append(
            Problem(
                AUDIT,
                f"the self-audit made when this folder was written found {len(found)} problems{printable(first)}",
            )
        )
    return record
