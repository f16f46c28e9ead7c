"""Writing a new evidence folder: the records, a copy of the sources, both reports, a self-audit, ``SHA256SUMS``.

Its one job is to turn a campaign's results into a folder, never to decide them: outcomes come from the scenario
runner, and the folder is audited (:func:`lab.evidence.verify.audit`) before its manifest is written.
"""

from __future__ import annotations

from lab.evidence.write.files import OpenFolder, WriteError
from lab.evidence.write.resume import resume_folder
from lab.evidence.write.writer import create_evidence_folder, write_evidence

__all__ = [
    "OpenFolder",
    "WriteError",
    "create_evidence_folder",
    "resume_folder",
    "write_evidence",
]
