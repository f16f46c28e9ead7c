"""What a person reads in an evidence folder: ``report.md`` with its diagrams, and ``report.html``.

Its one job is to render both reports from the records alone, in one place (:func:`render_documents`), so that the
writer writes what the auditor can render again and compare byte for byte.
"""

from __future__ import annotations

from lab.evidence.report.documents import Explored, render_documents

__all__ = [
    "Explored",
    "render_documents",
]
