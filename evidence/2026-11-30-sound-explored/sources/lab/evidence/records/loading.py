"""Read one record of an evidence folder: bounded in size, parsed, its fields checked, every failure a problem.

Shared by every check that reads JSON (consistency, sources, exploration), so each names a bad file the same way.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from lab.evidence.records.findings import Problem
from lab.evidence.records.records import dump_json, parse_json
from lab.evidence.records.safefs import MIB, FolderReader, Unreadable
from lab.evidence.records.schema import NONE, Rule, field_problems

JSON_CAP = 16 * MIB
LINES_CAP = 64 * MIB


def load_record(
    reader: FolderReader,
    listing: Mapping[str, str],
    rel: str,
    fields: Mapping[str, Rule],
    problems: list[Problem],
    optional: Mapping[str, Rule] = NONE,
) -> dict[str, Any] | None:
    """Read and parse one JSON record and check its fields (``optional`` ones when present); ``None`` (with
    problems) when it cannot be used.

    The lab writes every record with :func:`~lab.evidence.records.records.dump_json`, so a record must be exactly
    those bytes: two records that parse alike (spaces, key order, escapes) are one record, and a reader other than
    this one (``jq``, a person) never sees a different file from the one the audit read. A record that is not is a
    problem, and still read, so its fields are checked too."""
    if rel not in listing:
        problems.append(Problem(rel, "missing: every evidence folder has one"))
        return None
    data = read_file(reader, rel, JSON_CAP, problems)
    if data is None:
        return None
    try:
        value = parse_json(data)
    except ValueError as error:
        problems.append(Problem(rel, str(error)))
        return None
    if not isinstance(value, dict):
        problems.append(Problem(rel, "is JSON, but not an object"))
        return None
    if dump_json(value) != data:
        problems.append(
            Problem(
                rel, "is not written the way the lab writes records (sorted keys, two-space indent, UTF-8, newline)"
            )
        )
    reasons = field_problems(value, fields, optional)
    problems.extend(Problem(rel, reason) for reason in reasons)
    return None if reasons else value


def read_file(reader: FolderReader, rel: str, cap: int, problems: list[Problem], *, text: bool = False) -> bytes | None:
    """The file's bytes (at most ``cap``), or ``None`` with a problem; ``text`` also requires UTF-8."""
    try:
        data = reader.read(rel, cap)
    except Unreadable as error:
        problems.append(Problem(rel, str(error)))
        return None
    if text:
        try:
            data.decode("utf-8")
        except UnicodeDecodeError as error:
            problems.append(Problem(rel, f"is not UTF-8 (byte 0x{data[error.start]:02x} at offset {error.start})"))
            return None
    return data
