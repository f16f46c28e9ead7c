"""What the auditor re-derives with its own code: both reports byte for byte, and the facts the archive answers for.

Both close holes that sums and cross-checks leave open. ``report.md`` and ``report.html`` are made from the records
and decide nothing, so nothing else checks them: the auditor renders them again from the records (with
:func:`~lab.evidence.report.documents.render_documents`, which the writer calls too) and compares bytes.
That is only meaningful when the same renderer made it, so it is done unless a file the renderer imports drifted
(:func:`renderer_files`; drift of ``run.py``, ``audit.py`` or the auditor does not switch it off). Which scenarios,
explorations and cells had to be there is re-derived by :mod:`lab.evidence.verify.completeness`.
"""

from __future__ import annotations

import ast
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from lab.engine.core import TraceEvent
from lab.evidence.records.findings import Problem
from lab.evidence.records.layout import REPORT_HTML, REPORT_MD, RUN
from lab.evidence.records.records import result_from_record
from lab.evidence.records.safefs import printable
from lab.evidence.records.text import first_difference
from lab.evidence.report.documents import Explored, render_documents
from lab.evidence.verify.consistency import Evidence, ScenarioEvidence
from lab.scenarios.loader import BrokenScenario
from lab.scenarios.runner import ScenarioResult


def check_report(evidence: Evidence, problems: list[Problem]) -> bool:
    """Render ``report.md`` and ``report.html`` again from the records and compare bytes (``report.html`` when the
    folder has one: older folders do not); False when the records do not allow it."""
    run = evidence.run
    if run is None or evidence.report is None or any(s.result is None or s.events is None for s in evidence.scenarios):
        return False
    try:
        results = [_result(scenario) for scenario in evidence.scenarios if scenario.name in run["scenarios"]]
        broken = [BrokenScenario(b["name"], Path(b["file"]), b["problem"]) for b in run["broken"]]
        summary = run.get("exploration")
        if evidence.exploration.present and not isinstance(summary, dict):
            return False  # reported by the exploration checks
        explored = None
        if isinstance(summary, dict):  # a run with --explore has the section, even with nothing explored
            order = [entry["file"] for entry in summary["explorations"]]
            records = sorted(evidence.exploration.records, key=lambda item: order.index(item[0]))
            explored = Explored(summary["settings"], records, evidence.exploration.kill_matrix)
        made = render_documents(run, results, broken, explored)
    except (KeyError, ValueError, TypeError, AttributeError):  # records too broken to render: reported elsewhere
        return False
    for name, recorded in ((REPORT_MD, evidence.report), (REPORT_HTML, evidence.report_html)):
        if recorded is not None and made[name] != recorded:
            problems.append(
                Problem(
                    name,
                    f"differs from the report the audit's code makes of these records"
                    f"{_first_difference(recorded, made[name])}",
                )
            )
    return True


def check_facts(run: Mapping[str, Any] | None, package: bytes | None, problems: list[Problem]) -> None:
    """Fields of ``run.json`` the archive can answer for: ``lab_version`` is the ``__version__`` the archived
    ``lab/__init__.py`` (``package``) assigns, read without running it; ``network_requests`` is 0, since the runner
    only ever uses scripted transports."""
    if run is None:
        return
    if run["network_requests"] != 0:
        problems.append(
            Problem(
                RUN,
                f"network_requests is {run['network_requests']}, but the runner sends "
                "none (its transports are scripted)",
            )
        )
    version = _assigned_version(package) if package is not None else None
    if version is not None and run["lab_version"] != version:
        problems.append(
            Problem(
                RUN,
                f"lab_version is {printable(run['lab_version'])!r}, but the archived "
                f"lab/__init__.py says {printable(version)!r}",
            )
        )


def _assigned_version(source: bytes) -> str | None:
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return None
    for node in tree.body:
        if (
            isinstance(node, ast.Assign)
            and [getattr(t, "id", None) for t in node.targets] == ["__version__"]
            and isinstance(node.value, ast.Constant)
            and isinstance(node.value.value, str)
        ):
            return node.value.value
    return None


def _result(scenario: ScenarioEvidence) -> ScenarioResult:
    record = scenario.result
    assert record is not None and scenario.events is not None
    steps = [TraceEvent(e.step, e.actor, e.op, e.obj, e.detail) for e in scenario.events]
    return result_from_record(record, steps)


def _first_difference(recorded: bytes, made: bytes) -> str:
    old, new = recorded.decode("utf-8", "replace").splitlines(), made.decode("utf-8", "replace").splitlines()
    found = first_difference(old, new)
    return f" (first difference at line {found[0]})" if found else f" ({len(old)} lines, the audit makes {len(new)})"


RENDERER = "lab/evidence/report/documents.py"
"""The module whose :func:`~lab.evidence.report.documents.render_documents` makes both reports."""


def renderer_files(checkout: Path) -> frozenset[str]:
    """Every file of ``checkout``'s ``lab`` that the report renderer imports, transitively (read, not run): the
    files whose drift may make the same records render differently. Imports inside functions count too; a
    package's ``__init__.py`` does not (the lab's import everything, and render nothing; counting them would switch
    the check off for drift anywhere in ``lab/``). Along the archive's own imports from the renderer, the first file
    that differs from the checkout's is imported by an identical file, so the checkout's imports name it too."""
    found: set[str] = set()
    waiting = [RENDERER]
    while waiting:
        rel = waiting.pop()
        if rel in found:
            continue
        found.add(rel)
        try:
            tree = ast.parse((checkout / rel).read_bytes())
        except (OSError, SyntaxError, ValueError):
            continue
        package = rel.rsplit("/", 1)[0].replace("/", ".")
        for node in ast.walk(tree):
            modules: list[str] = []
            if isinstance(node, ast.Import):
                modules = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    parts = package.split(".")
                    parts = parts[: len(parts) - node.level + 1]
                    base = ".".join([*parts, *([base] if base else [])])
                modules = [base, *(f"{base}.{alias.name}" for alias in node.names)]
            for module in modules:
                parts = module.split(".")
                if parts[0] != "lab":
                    continue
                stem = "/".join(parts)
                if (checkout / f"{stem}.py").is_file():
                    waiting.append(f"{stem}.py")
    return frozenset(found)
