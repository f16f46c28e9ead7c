# size: an exploration's record and the kill matrix's, written and read back by one module, with their one verdict rule
"""Exploration records: one file per exploration, the kill matrix, and the summary ``run.json`` keeps of both.

The writer makes them, and so does the re-execution child from the archived copy of this module, so a
re-exploration is compared with the archive record to record. Everything in a record except its ``timing`` comes
from the explorer's deterministic search: the same sources write the same bytes. ``naive_bound`` is a string
because the multinomial bound of a long scenario has more digits than a JSON reader's number keeps.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from lab.engine.core import Json
from lab.errors import UsageError
from lab.evidence.records import layout
from lab.evidence.records.cross_check import cross_check_record, summary_entry
from lab.evidence.records.layout import KILL_MATRIX, exploration_path
from lab.evidence.records.schema import SUMMARY_KEYS, VERDICT_WORDS
from lab.scenarios.cross_check import CheckedExploration
from lab.scenarios.exploring import ExploreVerdict, ScenarioExploration
from lab.scenarios.kill_matrix import KillCell, KillMatrix
from lab.scenarios.outcomes import FAILING_GRADES
from lab.scenarios.runner import GRANULARITIES, ScenarioResult

DEFAULT_KILL_MATRIX_SCHEDULES = 20_000
"""What :func:`lab.scenarios.kill_matrix.build_kill_matrix` allows per cell when no settings say otherwise."""

_NAME = re.compile(r"[a-z][a-z0-9_]*")
_VARIANT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


@dataclass(frozen=True, slots=True)
class ExplorationFiles:
    """What the writer adds to a folder for exploration: the records by path, and ``run.json``'s summary."""

    records: tuple[tuple[str, dict[str, Json]], ...]
    kill_matrix: dict[str, Json] | None
    summary: dict[str, Json] | None
    cross_checks: tuple[tuple[str, dict[str, Json]], ...] = ()
    """Real threads' check of each exploration (``--cross-check``), by path: not replayed by the audit."""


def parse_exploration_path(rel: str) -> tuple[str, str, str] | None:
    """``(scenario, granularity, variant)`` of an exploration file's path, or ``None`` if it is not one."""
    return layout.parse_exploration_path(rel, GRANULARITIES)


def record_verdict(record: Mapping[str, Any]) -> ExploreVerdict:
    """The verdict an exploration record's own fields make: the one rule the writer writes it with and the auditor
    asks again, so that the two cannot disagree.

    FAIL when a row that was reached is FORBIDDEN or undeclared, or an outcome broke an invariant; else INCOMPLETE
    when a bound or the budget cut the search short, or when its ``problem`` says why the search proves nothing (a
    step the granularity treats as atomic that another actor can split, a thread the lab does not see, the fair
    scheduler's rule): the explorer writes a problem for a search that did not fail only then; else PASS.
    """
    failing = any(row["schedules"] and row["grade"] in FAILING_GRADES for row in record["rows"]) or any(
        outcome["broken"] for outcome in record["outcomes"]
    )
    if failing:
        return ExploreVerdict.FAIL
    if record["bounded"] or record["budget_hit"] or record["problem"]:
        return ExploreVerdict.INCOMPLETE
    return ExploreVerdict.PASS


def exploration_record(found: ScenarioExploration, *, default_variant: bool) -> dict[str, Json]:
    """The record of one exploration; ``default_variant`` says whether it explored the variant the run used. Its
    verdict is the one its fields make (:func:`record_verdict`), the explorer's in every case the explorer has."""
    record = _record(found, default_variant=default_variant)
    record["verdict"] = str(record_verdict(record))
    return record


def _record(found: ScenarioExploration, *, default_variant: bool) -> dict[str, Json]:
    example = found.counterexample
    return {
        "name": found.name,
        "variant": found.variant,
        "default_variant": default_variant,
        "granularity": found.granularity,
        "verdict": str(found.verdict),
        "schedules": found.schedules,
        "pruned": found.pruned,
        "naive_bound": str(found.naive_bound),
        "distinct": found.distinct,
        "counts": counts_record(found),
        "rows": [
            {
                "grade": str(row.grade),
                "reason": row.reason,
                "expect": dict(row.expect),
                "schedules": row.schedules,
                "example": row.example,
            }
            for row in found.rows
        ],
        "outcomes": _outcomes(found.outcomes),
        "counterexample": None
        if example is None
        else {
            "schedule": example.schedule,
            "observed": dict(example.observed),
            "why": example.why,
            "replayed": example.replayed,
            "preemptions": example.preemptions,
            "explanation": None if example.explanation is None else example.explanation.to_json(),
            "steps": [step.to_json() for step in example.steps],
            "steps_left_out": example.steps_left_out,
        },
        "replay_command": found.replay_command,
        "preemption_bound": found.preemption_bound,
        "max_schedules": found.max_schedules,
        "bounded": found.bounded,
        "budget_hit": found.budget_hit,
        "problem": found.problem,
        "search": search_record(found),
        "timing": {"seconds": round(found.seconds, 6)},
    }


def search_record(found: ScenarioExploration) -> dict[str, Json]:
    """How it searched, so that anyone can search again the same way: the strategy, the mode and the seed, the
    time budget and whether the clock is what stopped it, where the first failure was, each strategy's share."""
    return {
        "strategy": found.strategy,
        "mode": found.mode,
        "seed": found.seed,
        "time_budget": found.seconds_budget,
        "time_hit": found.time_hit,
        "first_failure": found.first_failure,
        "by_strategy": dict(found.by_strategy),
        "shrink_runs": found.shrink_runs,
    }


COUNT_WORDS = (
    "distinct interleaving classes",
    "executions run",
    "executions redundant (sleep-set blocked)",
    "naive count",
)
"""The keys of a record's ``counts``, in words: what the exploration claims to have covered, and at what cost."""
NOT_COMPUTED = "not computed"


def counts_record(found: ScenarioExploration) -> dict[str, Json]:
    """What an exploration claims: the classes of equivalent interleavings it found, the executions it ran, those
    that ended redundant, and the naive count (how many schedules a naive enumeration runs), or that it was not
    computed (a reduced exploration does not know it; ``naive_bound`` bounds it)."""
    classes, executions, redundant, naive = COUNT_WORDS
    return {
        classes: found.classes,
        executions: found.executions,
        redundant: found.blocked,
        naive: found.naive_count if found.naive_count is not None else NOT_COMPUTED,
    }


def _outcomes(counts: Mapping[str, int]) -> list[Json]:
    """Each distinct outcome with how many schedules reached it, sorted by its key, so the order never varies."""
    found: list[Json] = []
    for key in sorted(counts):
        try:
            parsed = json.loads(key)
            observed, broken = parsed["observed"], parsed["broken"]
        except (ValueError, TypeError, KeyError):  # a key not made by outcome_key: keep it whole
            observed, broken = key, []
        found.append({"observed": observed, "broken": broken, "schedules": counts[key]})
    return found


def kill_matrix_record(matrix: KillMatrix, *, max_schedules: int) -> dict[str, Json]:
    """The record of the kill matrix, its cells in the order they were explored, and what makes it fail."""
    problems = matrix.problems()
    return {
        "variants": list(matrix.variants),
        "scenarios": list(matrix.scenarios),
        "correct": list(matrix.correct),
        "granularities": list(dict.fromkeys(cell.granularity for cell in matrix.cells)),
        "max_schedules": max_schedules,
        "cells": [
            {
                "variant": c.variant,
                "scenario": c.scenario,
                "granularity": c.granularity,
                "status": c.status,
                "schedules": c.schedules,
                "schedule": c.schedule,
                "why": c.why,
            }
            for c in matrix.cells
        ],
        "problems": list(problems),
        "ok": not problems,
        "partial": matrix.partial,
    }


def matrix_from_record(record: Mapping[str, Any]) -> KillMatrix:
    """The :class:`KillMatrix` a (field-checked) record describes, to ask it again what makes it fail."""
    cells = tuple(
        KillCell(c["variant"], c["scenario"], c["granularity"], c["status"], c["schedules"], c["schedule"], c["why"])
        for c in record["cells"]
    )
    partial = record.get("partial", False) is True  # absent in folders written before selections were partial
    return KillMatrix(tuple(record["variants"]), tuple(record["scenarios"]), tuple(record["correct"]), cells, partial)


def summary_fails(summary: Mapping[str, Any]) -> bool:
    """Whether exploration makes the run FAIL: an exploration of a default variant that is not PASS (FAIL or
    INCOMPLETE), or a kill matrix with problems. Explorations of other variants (mutants) may fail: that is their
    lesson, and the kill matrix is where their verdicts count."""
    kill = summary.get("kill_matrix")
    return any(e["default_variant"] and e["verdict"] != ExploreVerdict.PASS for e in summary["explorations"]) or (
        isinstance(kill, dict) and not kill["ok"]
    )


def plan_exploration(
    results: Sequence[ScenarioResult],
    explorations: Sequence[ScenarioExploration],
    kill_matrix: KillMatrix | None,
    settings: Mapping[str, Any] | None,
) -> ExplorationFiles:
    """The exploration records of a run, or a :class:`UsageError` (before anything is written) if they cannot be.

    An exploration belongs beside its scenario's normal run: that run's variant is the scenario's default one,
    which decides whether the exploration's verdict counts towards the run's status.
    """
    if not explorations and kill_matrix is None and settings is None:
        return ExplorationFiles((), None, None)
    recorded = _settings(settings)
    defaults = {result.name: str(getattr(result, "variant", "") or "") for result in results}
    records: list[tuple[str, dict[str, Json]]] = []
    checks: dict[str, tuple[str, dict[str, Json]]] = {}
    for found in explorations:
        _check_exploration(found, defaults, recorded)
        path = exploration_path(found.name, found.granularity, found.variant)
        if any(path == seen for seen, _ in records):
            raise UsageError(
                f"{found.name} was explored twice at {found.granularity} granularity over "
                f"{found.variant or 'its session'}; keep one exploration of each"
            )
        records.append((path, exploration_record(found, default_variant=found.variant == defaults[found.name])))
        if isinstance(found, CheckedExploration):
            where = layout.cross_check_path(found.name, found.granularity, found.variant)
            checks[path] = (where, cross_check_record(found, path))
    kill = None
    if kill_matrix is not None:
        limit = recorded["max_schedules"] if recorded is not None else DEFAULT_KILL_MATRIX_SCHEDULES
        kill = kill_matrix_record(kill_matrix, max_schedules=limit)
    summary = summary_record(recorded, records, kill, checks)
    return ExplorationFiles(tuple(records), kill, summary, tuple(checks.values()))


def summary_record(
    settings: Mapping[str, Json] | None,
    records: Sequence[tuple[str, Mapping[str, Json]]],
    kill: Mapping[str, Json] | None,
    cross_checks: Mapping[str, tuple[str, Mapping[str, Json]]] | None = None,
) -> dict[str, Json]:
    """``run.json``'s ``exploration``: the settings, each exploration's verdict and counts, the kill matrix's state.

    ``cross_checks``: real threads' check of an exploration (path and record), by the exploration's path; its entry
    then says so, and its verdict is the one after the check (:func:`~lab.evidence.records.cross_check
    .checked_verdict`)."""
    checked = cross_checks or {}
    entries: list[Json] = []
    for path, record in records:
        entry: dict[str, Json] = {"file": path, **{key: record[key] for key in SUMMARY_KEYS}}
        if path in checked:
            where, check = checked[path]
            entry["verdict"] = check["verdict"]
            entry["cross_check"] = summary_entry(where, check)
        entries.append(entry)
    verdicts = [entry["verdict"] for entry in entries if isinstance(entry, dict)]
    return {
        "settings": dict(settings) if settings is not None else None,
        "explorations": entries,
        "verdicts": {verdict: verdicts.count(verdict) for verdict in VERDICT_WORDS},
        "kill_matrix": None if kill is None else {"file": KILL_MATRIX, "ok": kill["ok"], "problems": kill["problems"]},
    }


def _settings(settings: Mapping[str, Any] | None) -> dict[str, Json] | None:
    if settings is None:
        return None
    granularities, bound, limit = (settings.get(key) for key in ("granularities", "preemption_bound", "max_schedules"))
    if (
        not isinstance(granularities, list | tuple)
        or any(g not in GRANULARITIES for g in granularities)
        or not (bound is None or (isinstance(bound, int) and not isinstance(bound, bool) and bound >= 0))
        or not isinstance(limit, int)
        or isinstance(limit, bool)
        or limit <= 0
    ):
        raise UsageError(
            f"explore settings {dict(settings)!r} are not {{'granularities': [probe and/or line], "
            f"'preemption_bound': int or None, 'max_schedules': int}}"
        )
    return {"granularities": list(granularities), "preemption_bound": bound, "max_schedules": limit}


def _check_exploration(
    found: ScenarioExploration, defaults: Mapping[str, str], settings: Mapping[str, Any] | None
) -> None:
    if not _NAME.fullmatch(found.name) or found.name not in defaults:
        raise UsageError(f"exploration of {found.name!r}: explore only scenarios that also ran normally in this run")
    if found.granularity not in GRANULARITIES or (found.variant and not _VARIANT.fullmatch(found.variant)):
        raise UsageError(
            f"exploration of {found.name}: granularity {found.granularity!r} or variant "
            f"{found.variant!r} cannot name a file"
        )
    if settings is None:
        return
    if (
        found.granularity not in settings["granularities"]
        or found.max_schedules != settings["max_schedules"]
        or found.preemption_bound != settings["preemption_bound"]
    ):
        raise UsageError(
            f"exploration of {found.name} ({found.granularity}) does not use the explore settings {dict(settings)!r}"
        )
