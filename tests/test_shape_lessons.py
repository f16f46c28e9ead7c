"""The lessons' side of the shape: what ``lab`` exports, and that every scenario file imports only that.

A scenario file is a lesson a learner reads top to bottom; everything it needs comes from one place, ``lab``, and
nothing of the machinery that runs it (the scheduler, its policies, the explorer, the evidence) is within reach.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import lab

ROOT = Path(__file__).resolve().parent.parent
SCENARIOS = sorted((ROOT / "scenarios").glob("*.py"))

EXPORTS = [
    "DEFAULT_MODEL",
    "DEFAULT_SYSTEM_PROMPT",
    "DURABLE_VARIANTS",
    "POSTGRES_URL_VARIABLE",
    "VERSIONED_VARIANTS",
    "AskResult",
    "AskStatus",
    "Barrier",
    "BumpBeforeValidationSession",
    "ChatRequest",
    "CheckOutsideLockSession",
    "CommitStatus",
    "Event",
    "FailureKind",
    "Grade",
    "Granularity",
    "Held",
    "InProcessLockSession",
    "Lab",
    "LabError",
    "LabLock",
    "Latch",
    "LiveHistoryTicketSession",
    "Message",
    "Outcome",
    "Pause",
    "Pin",
    "PostgresStore",
    "ReceiptsAfterVersionSession",
    "Reply",
    "Role",
    "Scenario",
    "ScenarioError",
    "ScheduleError",
    "ScriptedTransport",
    "SqliteStore",
    "Stream",
    "StreamEnd",
    "StoreError",
    "Ticket",
    "TransactionalChat",
    "Transport",
    "TransportFailure",
    "TrimByMessageSession",
    "UnlockedSession",
    "UsageError",
    "VersionedSession",
    "__version__",
    "acceptable",
    "actor",
    "chat_state",
    "forbidden",
    "interesting",
    "is_whole_pairs",
    "lesson_postgres_url",
    "only",
    "pinned_scenario",
    "replies",
    "scratch_database",
    "versioned_state",
]
"""``lab.__all__``, pinned: a name joins or leaves the lessons' API on purpose, with this list."""

LESSON_PRIMITIVES = {"Barrier", "Event", "Granularity", "LabLock", "Latch"}
"""The only names of :mod:`lab.engine` a lesson handles: what ``self.lab`` hands it, and a pin's granularity."""


class TestExports:
    def test_the_lessons_api_is_the_pinned_list(self) -> None:
        """``lab.__all__`` is exactly the pinned list, and every name in it exists."""
        assert sorted(lab.__all__) == sorted(EXPORTS)
        missing = [name for name in lab.__all__ if not hasattr(lab, name)]
        assert missing == []

    def test_no_engine_internals_are_exported(self) -> None:
        """Of the engine, ``lab`` exports the primitives a lesson handles, never the scheduler or the explorer."""
        from_engine = {
            name for name in lab.__all__ if str(getattr(getattr(lab, name), "__module__", "")).startswith("lab.engine")
        }
        assert from_engine - LESSON_PRIMITIVES == set()


def _lab_imports(path: Path) -> list[tuple[int, str, list[str]]]:
    """Each import of the lab in ``path``: line, module, the names taken from it (empty for ``import lab...``)."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))):
        if isinstance(node, ast.Import):
            found += [(node.lineno, a.name, []) for a in node.names if a.name.partition(".")[0] == "lab"]
        elif isinstance(node, ast.ImportFrom) and (node.level or (node.module or "").partition(".")[0] == "lab"):
            found.append((node.lineno, "." * node.level + (node.module or ""), [a.name for a in node.names]))
    return found


class TestLessonsImportOnlyLab:
    def test_there_are_scenarios_to_check(self) -> None:
        """The check below reads the shipped scenario folder (an empty glob would pass vacuously)."""
        assert len(SCENARIOS) >= 20

    @pytest.mark.parametrize("path", SCENARIOS, ids=lambda path: path.stem)
    def test_a_scenario_imports_only_public_names_of_lab(self, path: Path) -> None:
        """A lesson imports ``from lab import ...`` (names of ``lab.__all__``), never a module inside the lab."""
        wrong = []
        for line, module, names in _lab_imports(path):
            if module != "lab":
                wrong.append(f"line {line}: imports {module}")
            wrong += [f"line {line}: imports lab.{name}, not in lab.__all__" for name in names if name not in EXPORTS]
        assert wrong == [], f"{path.relative_to(ROOT)}: " + "; ".join(wrong)
