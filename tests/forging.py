"""What a forger does after editing an evidence folder: make ``SHA256SUMS`` match every file as it now is.

Written here from the outside, on purpose, not with the lab's own manifest code: a test of the audit must not
borrow the audited code's idea of the format.
"""

from __future__ import annotations

import hashlib
from pathlib import Path


def reseal(folder: Path) -> None:
    """Cover one's tracks: rewrite ``SHA256SUMS`` so that it lists every other file with its current SHA-256."""
    lines = [
        f"{hashlib.sha256(path.read_bytes()).hexdigest()}  {path.relative_to(folder).as_posix()}\n"
        for path in sorted(folder.rglob("*"))
        if path.is_file() and path.name != "SHA256SUMS"
    ]
    (folder / "SHA256SUMS").write_text("".join(lines), encoding="utf-8")
