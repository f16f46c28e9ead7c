"""Write a new evidence folder: traces, results, the sources that ran, a report, a self-audit, and SHA256SUMS.

The folder is created exclusively and every file in it with ``open(..., "xb")``, so a run never overwrites
anything, and two runs racing for one name cannot both get it. ``SHA256SUMS`` is written last: a folder without it
is a run that did not finish, and the auditor says so; ``started.json``, written the moment the folder is made,
tells the auditor the folder is one even when the run was interrupted before anything else was written.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from lab import __version__
from lab.engine.core import encode_trace
from lab.errors import UsageError
from lab.evidence.records import sources as source_files
from lab.evidence.records.exploration import ExplorationFiles, plan_exploration
from lab.evidence.records.findings import AuditReport
from lab.evidence.records.layout import (
    AUDIT,
    KILL_MATRIX,
    RUN,
    SIGNATURE,
    SOURCES_JSON,
    STARTED,
    SUMS,
    is_scenario_name,
    requests_path,
    result_path,
    source_path,
    trace_path,
)
from lab.evidence.records.manifest import format_sums
from lab.evidence.records.records import (
    dump_json,
    request_lines,
    result_record,
    run_record,
    started_record,
)
from lab.evidence.records.signing import sign
from lab.evidence.reexecute.child import Code, Running
from lab.evidence.reexecute.reexplore import ExpectedExploration
from lab.evidence.reexecute.rerun import CHECKOUT, expected_of, prestart
from lab.evidence.report.documents import Explored, render_documents
from lab.evidence.verify.auditor import audit
from lab.evidence.write.files import Files, OpenFolder, WriteError
from lab.evidence.write.provenance import git_state
from lab.scenarios.exploring import ScenarioExploration
from lab.scenarios.kill_matrix import KillMatrix
from lab.scenarios.loader import BrokenScenario
from lab.scenarios.runner import ScenarioResult


def create_evidence_folder(
    path: Path, *, started: datetime | None = None, command: Sequence[str] | None = None
) -> Path:
    """Create ``path`` as a new folder holding only ``started.json``, or raise :class:`UsageError` and touch nothing.

    The folder must not exist, not even empty (evidence is never mixed with an older run), and its parent must
    already exist: the lab never creates folders the user did not name. ``os.mkdir`` is the only check that
    cannot race, so it decides; the checks before it only make the messages clear. ``started.json`` (the format
    and ``started``) is written at once, so a run interrupted before it wrote anything else still leaves a folder
    the auditor recognises as an unfinished run, not as some unrelated folder.
    """
    path = Path(path)
    if os.path.lexists(path):
        raise UsageError(f"{path} already exists; evidence always goes into a new folder, so name one that does not")
    parent = path.absolute().parent
    if not parent.is_dir():
        raise UsageError(
            f"{parent} is not an existing folder; create it first, or choose --out inside an existing folder"
        )
    try:
        os.mkdir(path)
    except FileExistsError:
        raise UsageError(f"{path} was created by someone else just now; choose another name") from None
    except OSError as error:
        raise UsageError(f"cannot create {path}: {error.strerror}") from None
    Files(path).write(STARTED, dump_json(started_record(started or datetime.now(UTC), command)))
    return path


def write_evidence(
    folder: Path,
    results: Sequence[ScenarioResult],
    broken: Sequence[BrokenScenario],
    *,
    root: Path,
    command: Sequence[str],
    started: datetime,
    ended: datetime,
    explorations: Sequence[ScenarioExploration] = (),
    kill_matrix: KillMatrix | None = None,
    explore_settings: Mapping[str, Any] | None = None,
    sign_with: Path | None = None,
    opened: OpenFolder | None = None,
    sources_changed: Sequence[str] | Callable[[], Sequence[str]] = (),
) -> AuditReport:
    """Write the whole evidence folder into the empty ``folder``, audit it (re-executing it), and return the audit.

    The self-audit runs before ``audit.json`` and ``SHA256SUMS`` exist, so it checks the files against the
    digests recorded while writing them; ``SHA256SUMS`` then covers every file, ``audit.json`` included.

    ``explorations``, ``kill_matrix`` and ``explore_settings`` (``{"granularities", "preemption_bound",
    "max_schedules"}``, ``None`` when the run did not explore) add ``explore/`` and the summary in ``run.json``;
    each exploration must be of a scenario in ``results``. Anything that cannot be recorded raises :class:`UsageError`
    before a file is written. ``sign_with``: a private key file; ``SHA256SUMS.sig`` is then written last
    (:mod:`lab.evidence.records.signing`), or :class:`~lab.evidence.records.signing.SigningError` raised.
    ``opened``: the folder as the run wrote it so far (its sources and the results of the scenarios that finished,
    :class:`~lab.evidence.write.files.OpenFolder`); only the rest is written. ``sources_changed``: how the sources
    changed while the run went on (:func:`~lab.evidence.records.sources.changed_during`), recorded in ``run.json``,
    where every audit names it as a problem; or the function that says so, called once the self-audit's
    re-execution has started (it reads every source file again, as ``git`` does here: both overlap it).
    """
    _check_names(results)
    explored = plan_exploration(results, explorations, kill_matrix, explore_settings)
    out = opened.files if opened is not None else Files(folder)
    out.adopt(STARTED, lambda: dump_json(started_record(started)))
    written = opened.archived if opened is not None else None
    archived = written if written is not None else source_files.collect(root)
    done = opened.results if opened is not None else set()
    kept = opened.written if opened is not None else {}
    made: list[_Made] = []
    records: list[Any] = []
    for result in results:
        if result.name in kept:  # written as it finished: its bytes and record are made already
            trace, requests, record = kept[result.name]
        else:
            trace, requests = encode_trace(result.trace), request_lines(result.requests)
            record = result_record(result, trace, requests, root=root)
        made.append(_Made(result, trace, requests))
        records.append(record)
    pending = _prestart(root, made, records, explored, archived, explore=explore_settings is not None)
    try:
        git = git_state(root, exclude=folder)
        changed = sources_changed() if callable(sources_changed) else sources_changed
        if written is None:
            for file in archived:
                out.write(source_path(file.path), file.data)
            out.write(SOURCES_JSON, dump_json(source_files.document(archived)))
        for item, record in zip(made, records, strict=True):
            if item.result.name in done:
                continue  # written when it finished
            out.write(trace_path(item.result.name), item.trace)
            if item.result.requests:
                out.write(requests_path(item.result.name), item.requests)
            out.write(result_path(item.result.name), dump_json(record))
        for rel, record in explored.records:
            out.write(rel, dump_json(record))
        if explored.kill_matrix is not None:
            out.write(KILL_MATRIX, dump_json(explored.kill_matrix))
        for rel, record in explored.cross_checks:  # real runs: their own files, which the audit replays nothing of
            out.write(rel, dump_json(record))
        run = run_record(
            results,
            broken,
            version=__version__,
            command=command,
            started=started,
            ended=ended,
            git=git,
            exploration=explored.summary,
        )
        if changed:
            run["sources_changed"] = list(changed)
        out.write(RUN, dump_json(run))
        summary = explored.summary
        shown = Explored(summary["settings"], explored.records, explored.kill_matrix) if summary is not None else None
        for name, data in render_documents(run, results, broken, shown).items():
            out.write(name, data)
        verified = audit(folder, rerun=True, checkout=root, manifest=dict(out.digests), started=pending)
    finally:
        if pending is not None:
            pending.close()
    out.write(AUDIT, dump_json(verified.to_json()))
    sums = format_sums(out.digests)
    out.write(SUMS, sums, record=False)
    if sign_with is not None:  # the folder is complete: a failure here leaves it verifiable, only unsigned
        out.write(SIGNATURE, sign(sums, sign_with), record=False)
    return verified


@dataclass(frozen=True, slots=True)
class _Made:
    """One scenario's result and the bytes its trace and requests are written as."""

    result: ScenarioResult
    trace: bytes
    requests: bytes


def _prestart(
    root: Path,
    made: Sequence[_Made],
    records: Sequence[dict[str, Any]],
    explored: ExplorationFiles,
    archived: Sequence[source_files.SourceFile],
    *,
    explore: bool,
) -> Running | None:
    """The self-audit's re-execution, started before the folder is written, so it runs while the writer writes:
    its request made from the very records about to be written, as the audit will make it from the folder. The
    audit uses it only if the request it makes is the same (:func:`~lab.evidence.reexecute.rerun.rerun`)."""
    describe: list[str] = []
    if explore:  # what the audit asks the child to describe: every archived scenario file
        texts = {file.path: file.data for file in archived}
        helpers = source_files.archived_helpers(texts, texts.get)
        describe = source_files.scenario_files(texts, helpers)
    return prestart(
        Code(root, sandboxed=False, label=CHECKOUT),
        [
            expected_of(item.result.name, record, item.trace, item.result.trace)
            for item, record in zip(made, records, strict=True)
        ],
        explorations=[ExpectedExploration(rel, record) for rel, record in explored.records],
        kill_matrix=explored.kill_matrix,
        describe=describe,
    )


def _check_names(results: Sequence[ScenarioResult]) -> None:
    names = [result.name for result in results]
    for name in names:
        if not is_scenario_name(name):
            raise UsageError(f"scenario name {name!r} cannot be a folder name; the loader only accepts snake_case")
    if len(set(names)) != len(names):
        raise UsageError("two results have the same scenario name; run each scenario once per evidence folder")


__all__ = ["OpenFolder", "WriteError", "create_evidence_folder", "write_evidence"]
