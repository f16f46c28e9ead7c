# size: the audit's order of checks, and its trust decisions around re-execution (drift, the copy)
"""Audit an evidence folder: integrity, consistency, sources and drift, re-execution; every problem, at once.

The audit only reads: it opens files inside the folder through :class:`~lab.evidence.records.safefs.FolderReader`,
each once (the bytes hashed are the bytes parsed, compared and copied; a file changed after it was read is named,
never read again), and the re-execution runs in a child (:mod:`lab.evidence.reexecute.child`) that works in a
temporary folder and never on the evidence folder. Only a folder that is not an evidence folder at all raises
(:class:`~lab.errors.EvidenceError`); everything else is a :class:`~lab.evidence.records.findings.Problem` in the
returned report.

The auditing checkout's code decides, and the archive's code runs only when it is trusted or asked for:

- the archived sources are compared with the auditing checkout (drift); drift of the lab's own machinery (engine,
  runner, evidence code: :data:`~lab.evidence.records.findings.MACHINERY`) fails the audit unless accepted
  (``accept_drift``, recorded in the report), because then the records were made by other code than the code
  judging them;
- by default the scenarios are re-executed only when every archived file that would run (``lab/`` and
  ``scenarios/``) is identical to the checkout's, and then with the checkout's code; otherwise re-execution is
  skipped, and that is a problem naming the files;
- ``execute_archive`` runs a temporary copy of the archived code, in a child with a scrubbed environment and
  resource limits, and only when ``sources/`` verified against ``sources.json``: code that fails its own
  fingerprints is reported, never executed.
"""

from __future__ import annotations

import os
import stat
import tempfile
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import lab
from lab.errors import EvidenceError, UsageError
from lab.evidence.records import sources as source_files
from lab.evidence.records.findings import AuditReport, Drift, Problem, Rerun, RerunStatus
from lab.evidence.records.layout import (
    RESULT,
    RUN,
    SCENARIOS,
    SIGNATURE,
    SOURCES,
    SOURCES_JSON,
    STARTED,
    SUMS,
    source_path,
)
from lab.evidence.records.loading import JSON_CAP
from lab.evidence.records.plan import ScenarioFacts
from lab.evidence.records.safefs import FolderReader, Unreadable, printable
from lab.evidence.records.signing import SIGNATURE_CAP, verify
from lab.evidence.reexecute.child import Code, Running
from lab.evidence.reexecute.reexplore import ExpectedExploration
from lab.evidence.reexecute.rerun import ARCHIVE, CHECKOUT, Expected, expected_of, prestart
from lab.evidence.reexecute.rerun import rerun as reexecute
from lab.evidence.verify.archive import check_sources
from lab.evidence.verify.completeness import check_command, check_contents
from lab.evidence.verify.consistency import Evidence, check_consistency
from lab.evidence.verify.integrity import SUMS_CAP, check_entries, check_integrity
from lab.evidence.verify.rederive import check_facts, check_report, renderer_files
from lab.evidence.verify.self_audit import NO_RERUN, check_self_audit

AUDITING_CHECKOUT = Path(lab.__file__).resolve().parent.parent
"""The tree holding the ``lab`` package that is auditing: the default checkout to compare with and to run."""
_PACKAGE_INIT = "lab/__init__.py"
"""The archived file (relative to ``sources/``) whose ``__version__`` ``run.json``'s ``lab_version`` must be."""


def audit(
    folder: Path,
    *,
    rerun: bool = True,
    checkout: Path | None = None,
    timeout: float | None = None,
    manifest: Mapping[str, str] | None = None,
    execute_archive: bool = False,
    accept_drift: bool = False,
    allowed_signers: Path | None = None,
    progress: Callable[[str], None] | None = None,
    started: Running | None = None,
) -> AuditReport:
    """Verify ``folder`` and return the report; raise :class:`EvidenceError` if it is not an evidence folder.

    ``checkout``: the trusted source tree the archived sources are compared with, and whose code re-executes them
    when they are identical (default: :data:`AUDITING_CHECKOUT`).
    ``timeout``: seconds the re-execution may take (default: generous, plus any recorded hang's watchdog).
    ``manifest``: the digests the writer recorded, for its self-audit before ``SHA256SUMS`` exists.
    ``execute_archive``: re-execute the archived code itself, contained (see :mod:`lab.evidence.reexecute.child`).
    ``accept_drift``: drift of the lab's machinery is reported and recorded as accepted, not a problem.
    ``allowed_signers``: an OpenSSH allowed-signers file; ``SHA256SUMS.sig`` must then verify against it.
    ``progress``: told, in a few words, each long step as it begins (a command shows them; re-execution can take
    a minute).
    ``started``: a re-execution child already at work (the writer starts its self-audit's while it writes,
    :func:`~lab.evidence.reexecute.rerun.prestart`); its report is used only if it is the very child this audit
    would start, from the records it read, and it is ended either way.
    """
    folder = Path(folder)
    _require_evidence_folder(folder)
    checkout = Path(checkout) if checkout is not None else AUDITING_CHECKOUT
    if not checkout.is_dir():
        raise UsageError(f"checkout {checkout} is not a folder")
    problems: list[Problem] = []
    payload: dict[str, bytes] | None = None
    reader = FolderReader(folder)  # every file is opened once, through it; its bytes are all any check sees
    try:
        with reader:
            try:
                listing = reader.listing()
            except Unreadable as error:
                problems.append(Problem(".", str(error)))
                listing = {}
            whole = listing
            if manifest is None and SUMS not in listing and listing:
                return _unfinished(folder, listing)
            listing = check_entries(reader, whole, problems)  # without hard-linked files: never read
            linked = frozenset(whole.keys() - listing.keys())
            verified = check_integrity(reader, listing, manifest, problems, linked=linked)
            evidence = check_consistency(reader, listing, problems, self_audit=manifest is not None)
            archived = check_sources(reader, listing, problems)
            check_facts(evidence.run, _archived_package(reader, listing, archived), problems)
            helpers, scenario_texts = _archived_helpers(reader, listing, archived)
            signature = _check_signature(reader, listing, problems, allowed_signers) if manifest is None else ""
            unsafe = _unsafe(problems) if archived is not None else [SOURCES_JSON]
            if rerun and execute_archive and not unsafe:
                payload = _verified_copy(reader, archived or {}, problems)
                unsafe = _unsafe(problems)
    except OSError as error:
        raise EvidenceError(f"{folder} cannot be read: {error.strerror}") from None
    drift = source_files.drift(archived, checkout) if archived is not None else None
    accepted = _judge_drift(drift, problems, accept=accept_drift)
    request = check_command(evidence.run, archived, problems, helpers)
    files = source_files.scenario_files(archived or {}, helpers)
    describe = files if request is not None and request.explore else ()
    early = (
        rerun and timeout is None and not execute_archive and not unsafe and drift is not None and not drift.runnable
    )
    if started is None and early:
        # The checkout's code will run (as _reexecute decides below, from what is known by now): start it now, so
        # it works while the report is rendered again; used only if it is the very child _reexecute would start.
        expected, explorations = _expected(evidence)
        started = prestart(
            Code(checkout, sandboxed=False, label=CHECKOUT),
            expected,
            explorations=explorations,
            kill_matrix=evidence.exploration.kill_matrix,
            describe=describe,
        )
    try:
        if drift is not None and not _renderer_drifted(drift, checkout):  # the same renderer: the same bytes
            check_report(evidence, problems)
    except BaseException:
        if started is not None:
            started.close()
        raise
    summary, facts = _rerun(
        evidence,
        problems,
        describe=describe,
        unsafe=unsafe,
        enabled=rerun,
        timeout=timeout,
        drift=drift,
        payload=payload,
        checkout=checkout,
        execute_archive=execute_archive,
        progress=progress,
        started=started,
    )
    check_self_audit(
        evidence.audit,
        run=evidence.run,
        request=request,
        listing=whole,
        scenarios=len(evidence.scenarios),
        explorations=len(evidence.exploration.records) + len(evidence.exploration.unusable),
        kill_matrix=evidence.exploration.kill_matrix is not None,
        same_machinery=drift is not None and not drift.machinery,
        problems=problems,
    )
    results = {scenario.name: scenario.result for scenario in evidence.scenarios}
    check_contents(evidence.run, request, evidence.exploration, results, files, facts, problems, scenario_texts)
    if summary.status is not RerunStatus.SKIPPED:
        _check_untouched(folder, whole, problems)
    for rel in reader.changed():  # each file was read once: what changed after it was read was never seen
        problems.append(
            Problem(rel, "changed on disk during the audit, after it was read: the audit judged the bytes it read")
        )
    run_status = evidence.run.get("status") if evidence.run is not None else None
    return AuditReport(
        folder=str(folder),
        mode="self-audit" if manifest is not None else "audit",
        problems=tuple(dict.fromkeys(Problem(printable(p.file), printable(p.reason)) for p in problems)),
        rerun=Rerun(
            summary.status,
            printable(summary.note),
            summary.scenarios,
            summary.seconds,
            summary.explorations,
            summary.code,
        ),
        drift=drift,
        files_verified=verified,
        scenarios=len(evidence.scenarios),
        explorations=len(evidence.exploration.records) + len(evidence.exploration.unusable),
        run_status=run_status if isinstance(run_status, str) else None,
        accepted_drift=accepted,
        signature=signature,
    )


def _unfinished(folder: Path, listing: Mapping[str, str]) -> AuditReport:
    """The report on a folder the run began (``started.json``) but never finished: nothing in it can be verified,
    and none of it is checked or run; it says how many results the run wrote before it stopped, which ``run.py
    --resume`` keeps."""
    written = sum(1 for rel in listing if rel.startswith(SCENARIOS) and rel.endswith(f"/{RESULT}"))
    reason = (
        f"missing: the run did not finish writing this folder ({SUMS} is written last): it was interrupted "
        f"or failed, so no file in it can be verified, and none was checked or run; it holds the results of "
        f"{written} scenario{'s' * (written != 1)} that finished, which the same command with --resume keeps "
        f"while it finishes the folder"
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
    if RUN not in names and SUMS not in names and STARTED not in names:
        raise EvidenceError(
            f"{folder} has neither {STARTED}, {RUN} nor {SUMS}: not an evidence folder (run.py writes all three)"
        )


def _check_signature(
    reader: FolderReader, listing: Mapping[str, str], problems: list[Problem], allowed: Path | None
) -> str:
    """What the report says of ``SHA256SUMS.sig``: who signed (verified), or that it was not checked; a signature
    that does not verify, or is missing when ``allowed`` is given, is a problem."""
    if SIGNATURE not in listing:
        if allowed is not None:
            problems.append(
                Problem(
                    SIGNATURE,
                    f"missing: the folder is not signed, and --allowed-signers {allowed} asks for a signature",
                )
            )
        return ""
    if allowed is None:
        return "present, not verified (give --allowed-signers FILE to verify it)"
    try:
        sums = reader.read(SUMS, SUMS_CAP)
        signature = reader.read(SIGNATURE, SIGNATURE_CAP)
    except Unreadable as error:
        problems.append(Problem(SIGNATURE, str(error)))
        return ""
    principal, reason = verify(sums, signature, allowed)
    if reason:
        problems.append(Problem(SIGNATURE, reason))
        return ""
    return f"{SUMS} signed by {principal} (verified with ssh-keygen -Y verify against {allowed})"


def _archived_package(
    reader: FolderReader, listing: Mapping[str, str], archived: Mapping[str, str] | None
) -> bytes | None:
    """The archived ``lab/__init__.py``, when the archive verified and holds it (and it may be read)."""
    if archived is None or _PACKAGE_INIT not in archived or source_path(_PACKAGE_INIT) not in listing:
        return None
    try:
        return reader.read(source_path(_PACKAGE_INIT), JSON_CAP)
    except Unreadable:
        return None


def _archived_helpers(
    reader: FolderReader, listing: Mapping[str, str], archived: Mapping[str, str] | None
) -> tuple[set[str], dict[str, bytes]]:
    """The archived scenario folder's helper modules, told apart from its scenarios by their archived bytes; and
    those bytes, by path, each file read once."""
    texts: dict[str, bytes] = {}

    def read(path: str) -> bytes | None:
        if source_path(path) not in listing:
            return None
        try:
            texts[path] = reader.read(source_path(path), JSON_CAP)
        except Unreadable:
            return None
        return texts[path]

    return source_files.archived_helpers(archived or {}, read), texts


def _unsafe(problems: list[Problem]) -> list[str]:
    """The files whose problems make the archived sources unfit to run (or to trust as a copy of anything)."""
    return sorted({p.file for p in problems if p.file.startswith(SOURCES) or p.file == SOURCES_JSON})


def _verified_copy(
    reader: FolderReader, archived: Mapping[str, str], problems: list[Problem]
) -> dict[str, bytes] | None:
    """The archived files' bytes, the very bytes :func:`check_sources` fingerprinted (the reader read each once),
    checked against their fingerprints again: the copy that runs is exactly what verified, whatever happens to the
    folder afterwards."""
    copy: dict[str, bytes] = {}
    for path, digest in archived.items():
        try:
            data = reader.read(source_path(path), JSON_CAP)
        except Unreadable as error:
            problems.append(Problem(source_path(path), str(error)))
            return None
        if source_files.source_digest(data) != digest:
            problems.append(Problem(source_path(path), "changed while it was being copied for re-execution"))
            return None
        copy[path] = data
    return copy


def _judge_drift(drift: Drift | None, problems: list[Problem], *, accept: bool) -> tuple[str, ...]:
    """Drift of the lab's machinery is a problem, or, with ``accept``, the accepted files (recorded in the report)."""
    if drift is None or not drift.machinery:
        return ()
    if accept:
        return drift.machinery
    problems.append(
        Problem(
            SOURCES,
            f"the lab's machinery differs from the auditing checkout {drift.checkout} in {len(drift.machinery)} "
            f"files ({_listed(drift, drift.machinery)}): the records were made by other code than the code judging "
            f"them; audit from a checkout of the code that made the run, or accept the difference with "
            f"--accept-drift",
        )
    )
    return ()


def _listed(drift: Drift, paths: tuple[str, ...], most: int = 6) -> str:
    words = {
        **{p: "changed" for p in drift.changed},
        **{p: "added" for p in drift.added},
        **{p: "removed" for p in drift.removed},
    }
    shown = [f"{path} ({words[path]})" for path in paths[:most]]
    return ", ".join(shown) + (f" and {len(paths) - most} more" if len(paths) > most else "")


def _rerun(
    evidence: Evidence, problems: list[Problem], *, describe: Sequence[str], **options: Any
) -> tuple[Rerun, dict[str, ScenarioFacts] | None]:
    """The re-execution's summary, and what the scenario files (those it ran, and ``describe``) declare, when the
    code that ran says so."""
    told: list[dict[str, ScenarioFacts] | None] = []
    summary = _reexecute(evidence, problems, describe=describe, told=told, **options)
    return summary, told[0] if told else None


def _reexecute(
    evidence: Evidence,
    problems: list[Problem],
    *,
    describe: Sequence[str],
    told: list[dict[str, ScenarioFacts] | None],
    unsafe: list[str],
    enabled: bool,
    timeout: float | None,
    drift: Drift | None,
    payload: Mapping[str, bytes] | None,
    checkout: Path,
    execute_archive: bool,
    progress: Callable[[str], None] | None = None,
    started: Running | None = None,
) -> Rerun:
    explored = evidence.exploration
    if not enabled:
        note = NO_RERUN
        if explored.present:
            note += ": neither the scenarios nor the explorations were run again"
        return Rerun(RerunStatus.SKIPPED, note)
    if unsafe or drift is None:
        return Rerun(
            RerunStatus.SKIPPED,
            f"re-execution skipped: the archived sources failed verification "
            f"({', '.join(unsafe[:3]) or SOURCES_JSON}{', ...' if len(unsafe) > 3 else ''}), so they were not run",
        )
    if not execute_archive and drift.runnable:
        reason = (
            f"re-execution skipped: {len(drift.runnable)} archived files that would run differ from the auditing "
            f"checkout {drift.checkout} ({_listed(drift, drift.runnable)}), so neither its code nor the "
            f"archive's was run"
        )
        problems.append(
            Problem(
                SOURCES,
                f"{reason}; run the archived code, contained, with --execute-archive, or "
                f"audit from a checkout of the code that made the run",
            )
        )
        return Rerun(RerunStatus.SKIPPED, reason)
    if execute_archive and payload is None:
        return Rerun(RerunStatus.SKIPPED, "re-execution skipped: the archived sources could not be copied")
    expected, explorations = _expected(evidence)
    unchecked = [s.name for s in evidence.scenarios if s.result is None]
    if progress is not None:
        extra = f" and {len(explorations)} exploration{'s' * (len(explorations) != 1)}" if explorations else ""
        progress(f"re-executing {len(expected)} scenario{'s' * (len(expected) != 1)}{extra}")
    with tempfile.TemporaryDirectory(prefix="lab-archive-") as scratch:
        if payload is not None:
            code = Code(Path(scratch), sandboxed=True, label=ARCHIVE)
            try:
                _write_copy(Path(scratch), payload)
            except OSError as error:  # sources.json lists a path as a file and as a folder, for one
                problems.append(Problem(SOURCES, f"cannot be copied for re-execution: {error.strerror or error}"))
                return Rerun(RerunStatus.SKIPPED, "re-execution skipped: the archived sources could not be copied")
        else:
            code = Code(checkout, sandboxed=False, label=CHECKOUT)
        summary, found, facts = reexecute(
            code,
            expected,
            explorations=explorations,
            kill_matrix=explored.kill_matrix,
            timeout=timeout,
            describe=describe,
            started=started,
        )
        told.append(facts)
    problems.extend(found)
    note = f"; not re-executed (no usable result.json): {', '.join(unchecked)}" if unchecked else ""
    note += f"; not re-explored (not usable): {', '.join(explored.unusable)}" if explored.unusable else ""
    if note:
        return Rerun(
            summary.status, summary.note + note, summary.scenarios, summary.seconds, summary.explorations, summary.code
        )
    return summary


def _expected(evidence: Evidence) -> tuple[list[Expected], list[ExpectedExploration]]:
    """What a re-execution must reproduce, from the records read: each scenario with a usable result, and each
    usable exploration."""
    expected = [expected_of(s.name, s.result, s.trace, s.events) for s in evidence.scenarios if s.result is not None]
    return expected, [ExpectedExploration(rel, record) for rel, record in evidence.exploration.records]


def _renderer_drifted(drift: Drift, checkout: Path) -> bool:
    """True when a file the report renderer imports differs from the archive's: only then may the same records
    have rendered to other bytes. Drift elsewhere (``run.py``, ``audit.py``, the auditor), accepted or not, leaves
    the reports to be rendered again and compared."""
    touched = {*drift.changed, *drift.added, *drift.removed}
    return bool(touched) and bool(touched & renderer_files(checkout))  # no drift, no need to read the imports


def _write_copy(root: Path, payload: Mapping[str, bytes]) -> None:
    for path, data in payload.items():
        target = root / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)


def _check_untouched(folder: Path, before: Mapping[str, str], problems: list[Problem]) -> None:
    """Re-execution never runs in the folder; should anything have changed its entries meanwhile, it is named."""
    try:
        with FolderReader(folder) as reader:
            after = reader.listing()
    except (OSError, Unreadable):
        return
    for rel in sorted(after.keys() - before.keys()):
        problems.append(Problem(rel, "appeared in the folder while the audit re-executed it"))
    for rel in sorted(before.keys() - after.keys()):
        problems.append(Problem(rel, "disappeared from the folder while the audit re-executed it"))
