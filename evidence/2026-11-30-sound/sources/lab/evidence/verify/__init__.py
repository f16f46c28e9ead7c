"""Verifying an evidence folder: integrity, consistency, archived sources, drift, and what the auditor re-derives.

Its one job is :func:`audit`: read a whole folder, never write to it, and report every problem at once; the
re-execution it asks for runs contained (:mod:`lab.evidence.reexecute`).
"""

from __future__ import annotations

from lab.evidence.verify.auditor import audit

__all__ = [
    "audit",
]
