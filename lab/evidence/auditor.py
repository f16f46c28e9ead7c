"""Audit an evidence folder: integrity, consistency, sources and drift, re-execution; every problem, at once.

The audit only reads: it opens files inside the folder through :class:`~lab.evidence.safefs.FolderReader`, and the
re-execution runs in a child that writes no bytecode and works in a temporary folder. Only a folder that is not
an evidence folder at all raises (:class:`~lab.errors.EvidenceError`); everything else is a
:class:`~lab.evidence.findings.Problem` in the returned report.

Re-execution runs the archived code, so it is attempted only when ``sources/`` verified against ``sources.json``:
code that fails its own fingerprints is reported, not executed.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Mapping
from pathlib import Path

from lab.errors import EvidenceError, UsageError
from lab.evidence import sources as source_files
from lab.evidence.archive import PREFIX, check_sources
from lab.evidence.consistency import Evidence, ScenarioEvidence, check_consistency
from lab.evidence.findings import AuditReport, Problem, Rerun, RerunStatus
from lab.evidence.integrity import check_integrity
from lab.evidence.manifest import SUMS
from lab.evidence.records import STARTED, sha256
from lab.evidence.reexplore import ExpectedExploration
from lab.evidence.rerun import Expected
from lab.evidence.rerun import rerun as reexecute
from lab.evidence.safefs import FolderReader, Unreadable, printable


def audit(
    folder: Path,
    *,
    rerun: bool = True,
    checkout: Path | None = None,
    timeout: float | None = None,
    manifest: Mapping[str, str] | None = None,
) -> AuditReport:
    """Verify ``folder`` and return the report; raise :class:`EvidenceError` if it is not an evidence folder.

    ``checkout``: a source tree to compare the archived sources with (drift is reported, never a failure).
    ``timeout``: seconds the re-execution may take (default: generous, plus any recorded hang's watchdog).
    ``manifest``: the digests the writer recorded, for its self-audit before ``SHA256SUMS`` exists.
    """
    folder = Path(folder)
    _require_evidence_folder(folder)
    if checkout is not None and not checkout.is_dir():
        raise UsageError(f"checkout {checkout} is not a folder")
    problems: list[Problem] = []
    try:
        with FolderReader(folder) as reader:
            try:
                listing = reader.listing()
            except Unreadable as error:
                problems.append(Problem(".", str(error)))
                listing = {}
            if manifest is None and SUMS not in listing and listing:
                return _unfinished(folder)
            verified = check_integrity(reader, listing, manifest, problems)
            evidence = check_consistency(reader, listing, problems, self_audit=manifest is not None)
            archived = check_sources(reader, listing, problems)
    except OSError as error:
        raise EvidenceError(f"{folder} cannot be read: {error.strerror}") from None
    drift = source_files.drift(archived, checkout) if checkout is not None and archived is not None else None
    summary = _rerun(folder, evidence, problems, enabled=rerun, timeout=timeout)
    run_status = evidence.run.get("status") if evidence.run is not None else None
    return AuditReport(
        folder=str(folder),
        mode="self-audit" if manifest is not None else "audit",
        problems=tuple(dict.fromkeys(Problem(printable(p.file), printable(p.reason)) for p in problems)),
        rerun=Rerun(summary.status, printable(summary.note), summary.scenarios, summary.seconds, summary.explorations),
        drift=drift,
        files_verified=verified,
        scenarios=len(evidence.scenarios),
        explorations=len(evidence.exploration.records) + len(evidence.exploration.unusable),
        run_status=run_status if isinstance(run_status, str) else None,
    )


def _unfinished(folder: Path) -> AuditReport:
    """The report on a folder the run began (``started.json``) but never finished: nothing in it can be verified,
    and none of it is checked or run."""
    reason = (
        f"missing: the run did not finish writing this folder ({SUMS} is written last): it was interrupted "
        f"or failed, so no file in it can be verified, and none was checked or run"
    )
    return AuditReport(
        folder=str(folder),
        mode="audit",
        problems=(Problem(SUMS, reason),),
        rerun=Rerun(RerunStatus.SKIPPED, "re-execution skipped: the run did not finish"),
        drift=None,
        files_verified=0,
        scenarios=0,
        unfinished=True,
    )


def _require_evidence_folder(folder: Path) -> None:
    try:
        info = os.stat(folder)
    except FileNotFoundError:
        raise EvidenceError(f"{folder} does not exist") from None
    except OSError as error:
        raise EvidenceError(f"{folder} cannot be read: {error.strerror}") from None
    if not stat.S_ISDIR(info.st_mode):
        raise EvidenceError(f"{folder} is a file, not an evidence folder")
    try:
        names = os.listdir(folder)
    except OSError as error:
        raise EvidenceError(f"{folder} cannot be listed: {error.strerror}") from None
    if not names:
        raise EvidenceError(f"{folder} is empty: not an evidence folder")
    if "run.json" not in names and SUMS not in names and STARTED not in names:
        raise EvidenceError(
            f"{folder} has neither {STARTED}, run.json nor {SUMS}: not an evidence folder (run.py writes all three)"
        )


def _rerun(folder: Path, evidence: Evidence, problems: list[Problem], *, enabled: bool, timeout: float | None) -> Rerun:
    explored = evidence.exploration
    if not enabled:
        note = "re-execution skipped (--no-rerun)"
        if explored.present:
            note += ": neither the scenarios nor the explorations were run again"
        return Rerun(RerunStatus.SKIPPED, note)
    unsafe = sorted({p.file for p in problems if p.file.startswith(PREFIX) or p.file == "sources.json"})
    if unsafe:
        return Rerun(
            RerunStatus.SKIPPED,
            f"re-execution skipped: the archived sources failed verification "
            f"({', '.join(unsafe[:3])}{', ...' if len(unsafe) > 3 else ''}), "
            f"so they were not run",
        )
    expected = [item for item in map(_expected, evidence.scenarios) if item is not None]
    unchecked = [s.name for s in evidence.scenarios if s.result is None]
    explorations = [ExpectedExploration(rel, record) for rel, record in explored.records]
    summary, found = reexecute(
        folder / "sources", expected, explorations=explorations, kill_matrix=explored.kill_matrix, timeout=timeout
    )
    problems.extend(found)
    note = f"; not re-executed (no usable result.json): {', '.join(unchecked)}" if unchecked else ""
    note += f"; not re-explored (not usable): {', '.join(explored.unusable)}" if explored.unusable else ""
    if note:
        return Rerun(summary.status, summary.note + note, summary.scenarios, summary.seconds, summary.explorations)
    return summary


def _expected(scenario: ScenarioEvidence) -> Expected | None:
    if scenario.result is None:
        return None
    result = scenario.result
    hangs = [e.detail.get("watchdog_seconds") for e in scenario.events or () if e.op == "hang"]
    watchdog = hangs[0] if hangs and isinstance(hangs[0], int | float) and hangs[0] > 0 else None
    return Expected(
        name=scenario.name,
        trace=scenario.trace,
        trace_sha256=sha256(scenario.trace) if scenario.trace is not None else result["trace_sha256"],
        requests_sha256=result["requests_sha256"],
        outcomes=result["outcomes"],
        verdict=result["verdict"],
        run_status=result["run_status"],
        watchdog_seconds=float(watchdog) if watchdog is not None else None,
        options={"variant": result["variant"], "granularity": result["granularity"]},
    )
