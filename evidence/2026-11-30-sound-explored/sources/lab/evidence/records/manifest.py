"""``SHA256SUMS``: the folder's manifest, in the format coreutils' ``sha256sum -c`` reads.

One line per file, ``<64 lowercase hex>  <relative path>`` (two spaces: text mode), sorted by path, every line
ending in LF. The manifest is written last, so its presence says the run finished writing; it never lists itself.
Paths are plain relative paths (see :func:`lab.evidence.records.safefs.path_problem`), so no line needs coreutils'
backslash escaping.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from lab.evidence.records.layout import SUMS
from lab.evidence.records.safefs import path_problem, printable

_LINE = re.compile(r"([0-9a-fA-F]{64})  (.+)")


def format_sums(digests: Mapping[str, str]) -> bytes:
    """The manifest's bytes for ``digests`` (path -> hex), sorted by path."""
    for path in digests:
        reason = path_problem(path)
        if reason or path == SUMS:  # an invariant: the writer names every file it lists, from the folder layout
            raise ValueError(f"cannot list {path!r} in {SUMS}: {reason or 'the manifest never lists itself'}")
    return "".join(f"{digests[path]}  {path}\n" for path in sorted(digests)).encode("utf-8")


def parse_sums(data: bytes) -> tuple[dict[str, str], list[str]]:
    """The manifest's entries (path -> lowercase hex) and, separately, why any line could not be used.

    A line that names an unsafe path (absolute, ``..``) is reported and left out, so it is never opened.
    """
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as error:
        return {}, [f"is not UTF-8 (byte 0x{data[error.start]:02x} at offset {error.start})"]
    if not text:
        return {}, ["is empty"]
    reasons: list[str] = []
    lines = text.split("\n")
    if lines.pop():  # a line without its newline may be cut short anywhere, even inside its path: not used
        reasons.append("the last line does not end with a newline: the file is truncated")
    entries: dict[str, str] = {}
    for number, line in enumerate(lines, start=1):
        match = _LINE.fullmatch(line)
        if match is None:
            reasons.append(f"line {number} is not '<64 hex digits>  <path>': {printable(line[:80])!r}")
            continue
        digest, path = match.group(1).lower(), match.group(2)
        problem = path_problem(path) or ("the manifest lists itself" if path == SUMS else "")
        if problem:
            reasons.append(f"line {number} names {printable(path)!r}: {problem}; not opened")
        elif path in entries:
            reasons.append(f"line {number} lists {path} a second time")
        else:
            entries[path] = digest
    return entries, reasons
