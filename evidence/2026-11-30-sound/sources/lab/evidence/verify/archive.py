"""The archived sources: ``sources/`` must hold exactly the files ``sources.json`` lists, each matching its fingerprint.

Only then is the archive worth re-executing, and only then does comparing it with a checkout (drift) mean anything.
"""

from __future__ import annotations

from collections.abc import Mapping

from lab.evidence.records.findings import Problem
from lab.evidence.records.layout import SOURCES, SOURCES_JSON, source_path
from lab.evidence.records.loading import JSON_CAP, load_record
from lab.evidence.records.safefs import FolderReader, Unreadable, path_problem, printable
from lab.evidence.records.schema import SOURCES_FIELDS
from lab.evidence.records.sources import NORMALIZATION, combined_digest, source_digest


def check_sources(reader: FolderReader, listing: Mapping[str, str], problems: list[Problem]) -> dict[str, str] | None:
    """Verify ``sources/`` against ``sources.json``; return the archived fingerprints by path, or ``None``."""
    record = load_record(reader, listing, SOURCES_JSON, SOURCES_FIELDS, problems)
    present = {rel[len(SOURCES) :] for rel in listing if rel.startswith(SOURCES)}
    if record is None:
        return None
    if record["normalization"] != NORMALIZATION:
        problems.append(
            Problem(SOURCES_JSON, f"normalization is {printable(record['normalization'])!r}, not {NORMALIZATION!r}")
        )
    archived: dict[str, str] = {}
    for entry in record["files"]:
        path, digest = entry["path"], entry["sha256"]
        reason = path_problem(path) or ("listed twice" if path in archived else "")
        if reason:
            problems.append(Problem(SOURCES_JSON, f"lists {printable(path)!r}: {reason}"))
            continue
        archived[path] = digest
    if combined_digest(archived) != record["combined_sha256"]:
        problems.append(Problem(SOURCES_JSON, "combined_sha256 does not match its list of files"))
    for path, digest in sorted(archived.items()):
        if path not in present:
            problems.append(Problem(source_path(path), "missing: sources.json lists it"))
            continue
        try:
            data = reader.read(source_path(path), JSON_CAP)
        except Unreadable as error:
            problems.append(Problem(source_path(path), str(error)))
            continue
        if source_digest(data) != digest:
            problems.append(Problem(source_path(path), "does not match its fingerprint in sources.json"))
    for path in sorted(present - archived.keys()):
        problems.append(Problem(source_path(printable(path)), "is not listed in sources.json"))
    return archived
