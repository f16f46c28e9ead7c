"""Finishing an unfinished folder (``run.py --resume --out DIR``): what it holds is checked and kept, and only the
scenarios it lacks run.

A run writes its sources before any scenario runs and each result as its scenario finishes
(:class:`~lab.evidence.write.files.OpenFolder`), so a run that was killed leaves a folder worth finishing. Resuming
is only sound for the same run: the command that began the folder (``started.json`` records it) must be this one,
and the sources archived then must be the checkout's now, each file matching its fingerprint. A scenario counts as
finished when its ``result.json`` reads back, with its trace and requests, as exactly the record the lab writes of
the result it describes; anything else of it, and everything the end of a run writes (``run.json``, the reports,
explorations, ``audit.json``), is removed and made again. The final self-audit then re-executes every scenario,
those kept included.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from lab.engine.core import TraceEvent, encode_trace
from lab.errors import UsageError
from lab.evidence.records import sources as source_files
from lab.evidence.records.layout import (
    SOURCES,
    SOURCES_JSON,
    STARTED,
    SUMS,
    parse_scenario_path,
    requests_path,
    result_path,
    source_path,
    trace_path,
)
from lab.evidence.records.loading import JSON_CAP, LINES_CAP
from lab.evidence.records.records import dump_json, parse_json, request_lines, result_from_record, result_record
from lab.evidence.records.safefs import FolderReader, Unreadable, printable
from lab.evidence.records.text import refuse_constant
from lab.evidence.write.files import OpenFolder
from lab.scenarios.runner import ScenarioResult


@dataclass(slots=True)
class Resumed:
    """An unfinished folder, checked: the folder open for the rest, when its run began, what already finished."""

    opened: OpenFolder
    started: datetime
    finished: dict[str, ScenarioResult] = field(default_factory=dict)


def resume_folder(folder: Path, root: Path, command: Sequence[str]) -> Resumed:
    """Check the unfinished ``folder`` that ``command`` began from the sources at ``root``, keep what it holds of
    the run, remove the rest; or a one-line :class:`UsageError`, having touched nothing."""
    where = f"--resume: {printable(str(folder))}"
    if not folder.is_dir():
        raise UsageError(f"{where} is not a folder; --resume finishes the unfinished folder a run began")
    with FolderReader(folder) as reader:
        try:
            listing = reader.listing()
            started = _record(reader, STARTED)
        except (Unreadable, ValueError) as error:
            raise UsageError(f"{where} cannot be read as an unfinished run: {error}") from None
        if SUMS in listing:
            raise UsageError(f"{where} is finished (it has {SUMS}); nothing to resume")
        recorded = started.get("command")
        if not isinstance(recorded, list):
            raise UsageError(f"{where}: its started.json records no command (it predates --resume); start anew")
        if recorded != list(command):
            raise UsageError(
                f"{where} was begun by another command: {printable(' '.join(map(str, recorded)))}; resume it with "
                "that command and --resume"
            )
        archived = _archived(reader, listing, where)
        now = source_files.digests(source_files.collect(root))
        then = source_files.digests(archived)
        differ = sorted(path for path in then.keys() | now.keys() if then.get(path) != now.get(path))
        if differ:
            shown = ", ".join(differ[:3]) + (f" and {len(differ) - 3} more" if len(differ) > 3 else "")
            raise UsageError(
                f"{where}: the sources differ from those it was begun with ({len(differ)} files: {shown}); "
                "start a new folder"
            )
        kept: dict[str, bytes] = {STARTED: reader.read(STARTED, JSON_CAP), SOURCES_JSON: b""}
        kept[SOURCES_JSON] = reader.read(SOURCES_JSON, JSON_CAP)
        kept.update({source_path(file.path): file.data for file in archived})
        finished: dict[str, ScenarioResult] = {}
        for name in sorted({found[0] for found in map(parse_scenario_path, listing) if found is not None}):
            files = _finished(reader, listing, name, root)
            if files is not None:
                finished[name], scenario_files = files
                kept.update(scenario_files)
    _remove_all_but(folder, kept.keys())
    opened = OpenFolder(folder, root)
    for rel, data in kept.items():
        opened.files.kept(rel, data)
    opened.archived = list(archived)
    opened.results = set(finished)
    return Resumed(opened, datetime.fromisoformat(str(started["started"]).replace("Z", "+00:00")), finished)


def _record(reader: FolderReader, rel: str) -> dict[str, Any]:
    value = parse_json(reader.read(rel, JSON_CAP))
    if not isinstance(value, dict):
        raise ValueError(f"{rel} is not a JSON object")
    return value


def _archived(reader: FolderReader, listing: Mapping[str, str], where: str) -> list[source_files.SourceFile]:
    """The archived sources, each checked against ``sources.json``: what the resumed run runs, as the first did."""
    try:
        document = _record(reader, SOURCES_JSON)
        files = [
            source_files.SourceFile(entry["path"], reader.read(source_path(entry["path"]), JSON_CAP))
            for entry in document["files"]
        ]
        wanted = {entry["path"]: entry["sha256"] for entry in document["files"]}
    except (Unreadable, ValueError, KeyError, TypeError) as error:
        raise UsageError(f"{where}: its archived sources cannot be read ({error}); start a new folder") from None
    present = {rel[len(SOURCES) :] for rel in listing if rel.startswith(SOURCES)}
    if source_files.digests(files) != wanted or present != wanted.keys():
        raise UsageError(f"{where}: its archived sources do not match sources.json; start a new folder")
    return files


def _finished(
    reader: FolderReader, listing: Mapping[str, str], name: str, root: Path
) -> tuple[ScenarioResult, dict[str, bytes]] | None:
    """The result the scenario's files describe, and those files, when they read back as exactly what the lab
    writes of that result; ``None`` otherwise (it runs again)."""
    rels = [result_path(name), trace_path(name)] + ([requests_path(name)] if requests_path(name) in listing else [])
    try:
        data = {rel: reader.read(rel, LINES_CAP) for rel in rels}
        record = _record(reader, result_path(name))
        result = _result(record, data[trace_path(name)], data.get(requests_path(name), b""))
    except (Unreadable, ValueError, KeyError, TypeError, AttributeError, RecursionError):
        return None
    trace, requests = data[trace_path(name)], data.get(requests_path(name), b"")
    if (
        result.name != name
        or encode_trace(result.trace) != trace
        or request_lines(result.requests) != requests
        or bool(result.requests) != (requests_path(name) in listing)
        or dump_json(result_record(result, trace, requests, root=root)) != data[result_path(name)]
    ):
        return None
    return result, data


def _result(record: Mapping[str, Any], trace: bytes, requests: bytes) -> ScenarioResult:
    events = [json.loads(line, parse_constant=refuse_constant) for line in trace.decode("utf-8").splitlines()]
    steps = [TraceEvent(e["step"], e["actor"], e["op"], e["obj"], e["detail"]) for e in events]
    return result_from_record(record, steps, requests.split(b"\n")[:-1])


def _remove_all_but(folder: Path, kept: Sequence[str] | Any) -> None:
    """Remove every entry of ``folder`` but the files ``kept`` (relative paths) and the folders holding them;
    links are removed, never followed."""
    keep = set(kept)
    for where, dirs, files in os.walk(folder, topdown=False):
        rel = os.path.relpath(where, folder)
        prefix = "" if rel == "." else rel.replace(os.sep, "/") + "/"
        for name in files:
            if prefix + name not in keep:
                os.unlink(os.path.join(where, name))
        for name in dirs:
            path = os.path.join(where, name)
            if os.path.islink(path):
                os.unlink(path)
            elif not os.listdir(path):
                os.rmdir(path)
