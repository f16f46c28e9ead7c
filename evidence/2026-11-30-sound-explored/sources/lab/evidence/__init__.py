"""Evidence folders: write one for a run (:func:`write_evidence`), verify one later (:func:`audit`).

The folder's format is described in ``docs/evidence.md``. The writer and the auditor share the readers and
record formats in this package; neither decides outcomes, which come from the scenario runner.
"""

from __future__ import annotations

from lab.evidence.records.findings import AuditReport, Drift, Problem, Rerun, RerunStatus
from lab.evidence.verify.auditor import audit
from lab.evidence.write.writer import create_evidence_folder, write_evidence

__all__ = [
    "AuditReport",
    "Drift",
    "Problem",
    "Rerun",
    "RerunStatus",
    "audit",
    "create_evidence_folder",
    "write_evidence",
]
