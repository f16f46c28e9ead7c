"""Integrity: every file the manifest lists exists and matches, and nothing else is in the folder.

The manifest is ``SHA256SUMS``, or, during the writer's self-audit (before ``SHA256SUMS`` exists), the digests the
writer recorded as it wrote. Listed paths are opened through :class:`~lab.evidence.records.safefs.FolderReader`, so a
``../`` or a symbolic link is reported and never followed.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from lab.evidence.records.findings import Problem
from lab.evidence.records.layout import AUDIT, SIGNATURE, SUMS
from lab.evidence.records.manifest import parse_sums
from lab.evidence.records.safefs import MAX_DEPTH, MAX_ENTRIES, MIB, FolderReader, Unreadable, printable

SUMS_CAP = 16 * MIB


def check_entries(reader: FolderReader, listing: Mapping[str, str], problems: list[Problem]) -> dict[str, str]:
    """What the other checks may read: ``listing`` without the files that have more than one hard link, each a
    problem; and every empty folder is a problem (the run never leaves one, and a listing of files cannot show it).

    A hard link is another name for the same bytes, perhaps outside the folder (a secret file linked in as
    ``SHA256SUMS``): it is named and never read, so none of its content reaches a problem or the terminal."""
    linked: set[str] = set()
    for rel, kind in listing.items():
        if kind != "file":
            continue
        try:
            links = os.lstat(reader.root / rel).st_nlink
        except OSError:
            continue  # gone meanwhile: the check that reads it says so
        if links > 1:
            linked.add(rel)
            problems.append(
                Problem(
                    printable(rel),
                    f"has {links} hard links: its bytes have another name, perhaps outside the folder; an evidence "
                    "folder's files have one, so it is not read",
                )
            )
    empty = [printable(rel) for rel in _empty_folders(reader.root)]
    problems.extend(Problem(f"{rel}/", "is an empty folder: an evidence folder holds none") for rel in sorted(empty))
    return {rel: kind for rel, kind in listing.items() if rel not in linked}


def _empty_folders(root: Path) -> list[str]:
    """The folders below ``root`` that hold nothing, by relative path; walked with a stack, not recursion (a
    hostile folder may nest thousands deep), links never entered, at most :data:`MAX_ENTRIES` entries and
    :data:`MAX_DEPTH` levels (the listing names a folder beyond either)."""
    empty, seen = [], 0
    waiting = [(str(root), "", 0)]
    while waiting:
        where, rel, depth = waiting.pop()
        try:
            with os.scandir(where) as entries:
                names = [(entry.name, entry.is_dir(follow_symlinks=False)) for entry in entries]
        except OSError:
            continue  # the listing reports what cannot be read
        seen += 1 + len(names)
        if seen > MAX_ENTRIES:
            break
        if not names and rel:
            empty.append(rel)
        if depth < MAX_DEPTH:
            waiting.extend(
                (os.path.join(where, name), f"{rel}/{name}" if rel else name, depth + 1)
                for name, folder in names
                if folder
            )
    return empty


def check_integrity(
    reader: FolderReader,
    listing: Mapping[str, str],
    manifest: Mapping[str, str] | None,
    problems: list[Problem],
    *,
    linked: frozenset[str] = frozenset(),
) -> int:
    """Verify the folder against ``manifest`` (or ``SHA256SUMS`` when ``None``); return how many files matched.
    ``linked``: files with other hard links, already named, which are not read (``SHA256SUMS`` among them)."""
    if manifest is None:
        if SUMS in linked:
            return 0
        loaded = _read_sums(reader, listing, problems)
        if loaded is None:
            return 0
        manifest, label, later = loaded, SUMS, {SUMS, SIGNATURE}
    else:
        label, later = "the writer's record", {SUMS, AUDIT}  # both are written after the self-audit
    verified = 0
    for path, digest in sorted(manifest.items()):
        if path in linked:
            continue  # named by check_entries, never read
        try:
            actual = reader.sha256(path)
        except Unreadable as error:
            problems.append(Problem(path, f"listed in {label}, but {error}"))
            continue
        if actual == digest:
            verified += 1
        else:
            problems.append(
                Problem(path, f"content does not match {label} (sha256 {actual[:16]}..., listed {digest[:16]}...)")
            )
    for rel, kind in listing.items():
        if rel in manifest or (rel in later and kind == "file"):
            continue
        shown = printable(rel)
        if kind == "symlink":
            problems.append(
                Problem(shown, "is a symbolic link: an evidence folder holds only regular files; not followed")
            )
        elif kind == "other":
            problems.append(Problem(shown, "is not a regular file (a FIFO, socket or device); not opened"))
        else:
            problems.append(Problem(shown, f"is not listed in {label} (an extra file)"))
    return verified


def _read_sums(reader: FolderReader, listing: Mapping[str, str], problems: list[Problem]) -> dict[str, str] | None:
    if SUMS not in listing:
        problems.append(
            Problem(
                SUMS,
                f"missing: the run did not finish writing this folder ({SUMS} is written "
                "last), so no file in it can be verified",
            )
        )
        return None
    try:
        data = reader.read(SUMS, SUMS_CAP)
    except Unreadable as error:
        problems.append(Problem(SUMS, str(error)))
        return None
    entries, reasons = parse_sums(data)
    problems.extend(Problem(SUMS, reason) for reason in reasons)
    return entries
