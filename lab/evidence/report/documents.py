"""Both reports of an evidence folder, made in one place from the records: the writer writes what this returns, and
the auditor calls it again on what it read and compares the bytes, so the two can never assemble them differently.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from lab.engine.core import Json
from lab.evidence.records.cross_check import checks_of
from lab.evidence.records.layout import REPORT_HTML, REPORT_MD
from lab.evidence.report.explore_report import exploration_section
from lab.evidence.report.html import render_html
from lab.evidence.report.report import render_report
from lab.scenarios.loader import BrokenScenario
from lab.scenarios.runner import ScenarioResult


@dataclass(frozen=True)
class Explored:
    """What a run with ``--explore`` recorded: its settings, the exploration records (path, record) in the order
    ``run.json`` lists them, and the kill matrix's record (``None`` without one)."""

    settings: Mapping[str, Any] | None
    records: Sequence[tuple[str, Mapping[str, Any]]]
    kill_matrix: Mapping[str, Any] | None


def render_documents(
    run: Mapping[str, Json],
    results: Sequence[ScenarioResult],
    broken: Sequence[BrokenScenario],
    explored: Explored | None,
) -> dict[str, bytes]:
    """``{"report.md": ..., "report.html": ...}``, UTF-8; ``explored`` is ``None`` for a run without ``--explore``."""
    text = render_report(run, results, broken, explored.records if explored is not None else ())
    if explored is not None:
        actors = {result.name: list(result.outcomes) for result in results}
        section = exploration_section(
            explored.settings, explored.records, explored.kill_matrix, actors, checks=checks_of(run)
        )
        text += "\n" + "\n".join(section) + "\n" if section else ""
    parts = None if explored is None else (explored.settings, explored.records, explored.kill_matrix)
    page = render_html(run, results, broken, parts)
    return {REPORT_MD: text.encode("utf-8"), REPORT_HTML: page.encode("utf-8")}
