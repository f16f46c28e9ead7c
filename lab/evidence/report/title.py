"""The one title both reports carry: the run's status, and, for a run that explored, the explorations' own verdict.

A run's status grades its scenarios (and a mutant's exploration is expected to find the mutant's bug), so a report
titled by the status alone says PASS over an exploration that FAILed. The title names both, so that nobody reads
PASS where an exploration found a bug: ``Evidence: 1 scenario, PASS; exploration FAIL``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from lab.engine.core import Json
from lab.evidence.records.cross_check import checks_of

_WORST = ("FAIL", "INCOMPLETE", "ERROR")
"""Exploration verdicts a title names, in the order it looks for one (the first found is shown)."""


def report_title(run: Mapping[str, Json], scenarios: int, records: Sequence[tuple[str, Mapping[str, Any]]]) -> str:
    """``Evidence: N scenarios, STATUS``, then ``; exploration VERDICT`` (``; K explorations, VERDICT``)."""
    title = f"Evidence: {scenarios} scenario{'' if scenarios == 1 else 's'}, {run.get('status')}"
    if not records:
        return title
    checked = checks_of(run)  # an exploration's verdict after its cross-check: FAIL on a MODEL GAP
    verdicts = [str(checked.get(rel, record).get("verdict")) for rel, record in records]
    worst = next((v for v in _WORST if v in verdicts), "PASS" if all(v == "PASS" for v in verdicts) else verdicts[0])
    count = "exploration" if len(records) == 1 else f"{len(records)} explorations"
    return f"{title}; {count} {worst}"
