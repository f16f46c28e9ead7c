"""What a forger does after editing an evidence folder: make ``SHA256SUMS`` match every file as it now is, and
(:func:`rerender`) the reports match the records.

``reseal`` is written here from the outside, on purpose, not with the lab's own manifest code: a test of the audit
must not borrow the audited code's idea of the format. ``rerender`` uses the lab's renderer because a forger has it.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path


def reseal(folder: Path) -> None:
    """Cover one's tracks: rewrite ``SHA256SUMS`` so that it lists every other file with its current SHA-256."""
    lines = [
        f"{hashlib.sha256(path.read_bytes()).hexdigest()}  {path.relative_to(folder).as_posix()}\n"
        for path in sorted(folder.rglob("*"))
        if path.is_file() and path.name != "SHA256SUMS"
    ]
    (folder / "SHA256SUMS").write_text("".join(lines), encoding="utf-8")


def rewrite(folder: Path, rel: str, record: object) -> None:
    """Write ``record`` back as the lab writes JSON (sorted keys, two-space indent, UTF-8, a newline)."""
    text = json.dumps(record, sort_keys=True, ensure_ascii=False, indent=2) + "\n"
    (folder / rel).write_text(text, encoding="utf-8")


def rerender(folder: Path) -> None:
    """Make ``report.md`` and ``report.html`` say what the edited records say, with the lab's own renderer (which
    any forger has: it is in the folder's ``sources/``), so that only checks of the records can catch the edit."""
    from lab.evidence.records.safefs import FolderReader
    from lab.evidence.report.documents import Explored, render_documents
    from lab.evidence.verify import rederive
    from lab.evidence.verify.consistency import check_consistency
    from lab.scenarios.loader import BrokenScenario

    with FolderReader(folder) as reader:
        evidence = check_consistency(reader, reader.listing(), [], self_audit=False)
    run = evidence.run
    if run is None:  # run.json is not usable: the audit says so, whatever the reports say
        return
    results = [rederive._result(s) for s in evidence.scenarios if s.name in run["scenarios"]]
    broken = [BrokenScenario(b["name"], Path(b["file"]), b["problem"]) for b in run["broken"]]
    summary = run.get("exploration")
    explored = None
    if isinstance(summary, dict):
        order = [entry["file"] for entry in summary["explorations"]]
        records = sorted(evidence.exploration.records, key=lambda item: order.index(item[0]))
        explored = Explored(summary["settings"], records, evidence.exploration.kill_matrix)
    for name, data in render_documents(run, results, broken, explored).items():
        if (folder / name).exists():
            (folder / name).write_bytes(data)
