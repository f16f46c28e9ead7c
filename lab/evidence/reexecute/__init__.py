"""Running scenarios contained: a worker process per scenario file, and an archived folder run again in a child.

Its one job is execution the lab does not trust: each scenario file of a run is loaded and run in a worker process
of its own (:func:`run_files`), so one cannot harm another, and an audit's re-execution runs the archived (or the
auditing checkout's) code in a child with limits (:func:`rerun`), whose results are compared with the records.
"""

from __future__ import annotations

from lab.evidence.reexecute.child import Code, Running
from lab.evidence.reexecute.isolation import Job, run_files
from lab.evidence.reexecute.reexplore import ExpectedExploration
from lab.evidence.reexecute.rerun import (
    ARCHIVE,
    CHECKOUT,
    NOTHING_TO_RERUN,
    Expected,
    expected_of,
    matched_note,
    prestart,
    rerun,
)

__all__ = [
    "ARCHIVE",
    "CHECKOUT",
    "NOTHING_TO_RERUN",
    "Code",
    "Expected",
    "ExpectedExploration",
    "Job",
    "Running",
    "expected_of",
    "matched_note",
    "prestart",
    "rerun",
    "run_files",
]
