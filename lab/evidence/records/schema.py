# size: one table of fields per record, in the one place docs/evidence.md's tables are checked against
"""The fields of each JSON record in an evidence folder, and a checker that names every one that is wrong.

Each field is a predicate and the words for what it should be, so one table serves as both the check and the
message: ``field 'verdict' is 7, not PASS, FAIL or ERROR``. A record has required fields (``*_FIELDS``) and may
have optional ones (``*_OPTIONAL``: fields that folders written by older code lack, or that only some runs have),
checked when present. :data:`RECORDS` names every record's pair; ``docs/evidence.md`` documents the same fields in
its tables, and ``tests/test_evidence_schema.py`` holds the two, and what the writer writes, to each other.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from types import MappingProxyType
from typing import Any

from lab.evidence.records.layout import AUDIT, KILL_MATRIX, RESULT, RUN, SOURCES_JSON, STARTED, is_scenario_name
from lab.text import shorten

Rule = tuple[Callable[[Any], bool], str]

_HEX = re.compile(r"[0-9a-f]{64}")
_COMMIT = re.compile(r"[0-9a-f]{40}|[0-9a-f]{64}")


def _is_count(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _is_str_map(value: Any) -> bool:
    return isinstance(value, dict) and all(isinstance(v, str) for v in value.values())


def _is_str_list(value: Any) -> bool:
    return isinstance(value, list) and all(isinstance(v, str) for v in value)


def _is_git(value: Any) -> bool:
    """``run.json``'s ``git``: a lowercase SHA-1 or SHA-256 commit, ``dirty``, and (absent from folders written
    before it) ``changed_files``, which is 0 exactly when the checkout is not dirty; nothing else."""
    if not isinstance(value, dict) or not value.keys() <= {"commit", "dirty", "changed_files"}:
        return False
    commit, dirty = value.get("commit"), value.get("dirty")
    if not (isinstance(commit, str) and _COMMIT.fullmatch(commit) and isinstance(dirty, bool)):
        return False
    if "changed_files" not in value:
        return True
    changed = value["changed_files"]
    return _is_count(changed) and dirty == (changed > 0)


def _objects(value: Any, fields: Mapping[str, Rule], optional: Mapping[str, Rule] | None = None) -> bool:
    return isinstance(value, list) and all(
        isinstance(v, dict) and not field_problems(v, fields, optional or NONE) for v in value
    )


def _one_of(*words: str) -> Callable[[Any], bool]:
    """A predicate for one of ``words``: a value of any other type (a list, an object) is simply not one of them,
    never a ``TypeError`` from hashing it."""
    return lambda value: isinstance(value, str) and value in words


def is_hex(value: Any) -> bool:
    """True for a lowercase SHA-256 hex digest."""
    return isinstance(value, str) and _HEX.fullmatch(value) is not None


def is_name(value: Any) -> bool:
    """True for a scenario name: lower_snake_case, so it is a safe folder name."""
    return is_scenario_name(value)


STR: Rule = (lambda v: isinstance(v, str), "a string")
BOOL: Rule = (lambda v: isinstance(v, bool), "true or false")
COUNT: Rule = (_is_count, "a whole number >= 0")
NUMBER: Rule = (_is_number, "a number")
OBJECT: Rule = (lambda v: isinstance(v, dict), "an object")
STR_MAP: Rule = (_is_str_map, "an object of strings")
STR_LIST: Rule = (_is_str_list, "a list of strings")
HEX: Rule = (is_hex, "a SHA-256 hex digest")
HEX_OR_NULL: Rule = (lambda v: v is None or is_hex(v), "a SHA-256 hex digest or null")

NONE: Mapping[str, Rule] = MappingProxyType({})
"""No optional fields."""

CHECK_FIELDS: Mapping[str, Rule] = {"name": STR, "passed": BOOL, "reason": STR}
CHECK_OPTIONAL: Mapping[str, Rule] = {"kind": STR}
BLOCKED_FIELDS: Mapping[str, Rule] = {"actor": STR, "waits_for": STR}
BROKEN_FIELDS: Mapping[str, Rule] = {"name": STR, "file": STR, "problem": STR}
PROBLEM_FIELDS: Mapping[str, Rule] = {"file": STR, "reason": STR}
SOURCE_FIELDS: Mapping[str, Rule] = {"path": STR, "sha256": HEX}

RESULT_FIELDS: Mapping[str, Rule] = {
    "name": STR,
    "lesson": STR,
    "description": STR,
    "source": STR,
    "mutant": BOOL,
    "verdict": (_one_of("PASS", "FAIL", "ERROR", "SKIPPED"), "PASS, FAIL, ERROR or SKIPPED"),
    "run_status": STR,
    "variant": STR,
    "granularity": STR,
    "actors": STR_LIST,
    "expect": STR_MAP,
    "outcomes": STR_MAP,
    "state": OBJECT,
    "checks": (lambda v: _objects(v, CHECK_FIELDS, CHECK_OPTIONAL), "a list of {name, passed, reason}"),
    "blocked": (lambda v: _objects(v, BLOCKED_FIELDS), "a list of {actor, waits_for}"),
    "errors": STR_MAP,
    "problem": STR,
    "transport_calls": COUNT,
    "requests": COUNT,
    "requests_sha256": HEX_OR_NULL,
    "trace_events": COUNT,
    "trace_sha256": HEX,
    "timing": (lambda v: isinstance(v, dict) and _is_number(v.get("seconds")), "an object with seconds"),
}
RESULT_OPTIONAL: Mapping[str, Rule] = {"store": STR}

RUN_FIELDS: Mapping[str, Rule] = {
    "format": STR,
    "lab_version": STR,
    "command": STR_LIST,
    "python": (
        lambda v: isinstance(v, dict) and not field_problems(v, {"implementation": STR, "version": STR}),
        "an object with implementation and version",
    ),
    "platform": STR,
    "started": STR,
    "ended": STR,
    "duration_seconds": NUMBER,
    "scenario_count": COUNT,
    "scenarios": (lambda v: isinstance(v, list) and all(is_name(n) for n in v), "a list of scenario names"),
    "checks": (
        lambda v: isinstance(v, dict) and not field_problems(v, {"passed": COUNT, "failed": COUNT}),
        "an object with passed and failed counts",
    ),
    "verdicts": (
        lambda v: isinstance(v, dict) and not field_problems(v, {"PASS": COUNT, "FAIL": COUNT, "ERROR": COUNT}),
        "an object with PASS, FAIL and ERROR counts",
    ),
    "broken": (lambda v: _objects(v, BROKEN_FIELDS), "a list of {name, file, problem}"),
    "transport_calls": COUNT,
    "network_requests": COUNT,
    "status": (_one_of("PASS", "FAIL"), "PASS or FAIL"),
    "git": (
        lambda v: v is None or _is_git(v),
        "null or {commit: a hex commit, dirty: true or false, changed_files: a count, none exactly when not dirty}",
    ),
}

RUN_OPTIONAL: Mapping[str, Rule] = {
    # its fields are checked, with the exploration records, by lab.evidence.verify.explore_checks
    "exploration": ((lambda v: v is None or isinstance(v, dict)), "null or the exploration summary"),
    # written only when the sources changed while the run went on; every audit names each line as a problem
    "sources_changed": (
        lambda v: isinstance(v, list) and bool(v) and all(isinstance(line, str) for line in v),
        "a list of lines, one per source file that changed during the run",
    ),
}

SOURCES_FIELDS: Mapping[str, Rule] = {
    "normalization": STR,
    "combined_sha256": HEX,
    "files": (lambda v: _objects(v, SOURCE_FIELDS), "a list of {path, sha256}"),
}

STARTED_FIELDS: Mapping[str, Rule] = {"format": STR, "started": STR}

STARTED_OPTIONAL: Mapping[str, Rule] = {
    "command": (lambda v: isinstance(v, list) and all(isinstance(w, str) for w in v), "a list of words"),
}

AUDIT_FIELDS: Mapping[str, Rule] = {
    "mode": STR,
    "ok": BOOL,
    "folder": STR,
    "rerun": OBJECT,
    "problems": (lambda v: _objects(v, PROBLEM_FIELDS), "a list of {file, reason}"),
}
AUDIT_OPTIONAL: Mapping[str, Rule] = {
    "drift": (lambda v: v is None or isinstance(v, dict), "null or an object"),
    "files_verified": COUNT,
    "scenarios": COUNT,
    "explorations": COUNT,
    "accepted_drift": STR_LIST,
    "run_status": (lambda v: v is None or isinstance(v, str), "null or a string"),
    "signature": STR,
    "unfinished": BOOL,
}


def field_problems(
    data: Mapping[str, Any], fields: Mapping[str, Rule], optional: Mapping[str, Rule] = NONE
) -> list[str]:
    """One reason per required field that is missing or of the wrong kind, in the table's order, then one per
    ``optional`` field that is present and of the wrong kind."""
    reasons = []
    for name, (accepts, words) in fields.items():
        if name not in data:
            reasons.append(f"has no field {name!r}")
        elif not accepts(data[name]):
            reasons.append(f"field {name!r} is {shorten(repr(data[name]), 40)}, not {words}")
    for name, (accepts, words) in optional.items():
        if name in data and not accepts(data[name]):
            reasons.append(f"field {name!r} is {shorten(repr(data[name]), 40)}, not {words}")
    return reasons


# -- exploration (docs/evidence.md, "Exploration") -----------------------------------------------------------------

ANY: Rule = (lambda v: True, "any value")
VERDICT_WORDS = ("PASS", "FAIL", "INCOMPLETE")
CELL_WORDS = ("killed", "survived", "incomplete")
NAME: Rule = (is_name, "a scenario name")
TIMING: Rule = (lambda v: isinstance(v, dict) and _is_number(v.get("seconds")), "an object with seconds")

ROW_FIELDS: Mapping[str, Rule] = {"grade": STR, "reason": STR, "expect": OBJECT, "schedules": COUNT, "example": STR}
OUTCOME_FIELDS: Mapping[str, Rule] = {"observed": ANY, "broken": STR_LIST, "schedules": COUNT}
COUNTEREXAMPLE_FIELDS: Mapping[str, Rule] = {
    "schedule": STR,
    "observed": OBJECT,
    "why": STR,
    "replayed": BOOL,
    "preemptions": COUNT,
}
"""A counterexample's required fields. ``explanation`` (null, or what :data:`EXPLANATION_FIELDS` lists) is checked
when present: records written before counterexamples explained themselves do not have it."""
EXPLANATION_FIELDS: Mapping[str, Rule] = {
    "races": COUNT,
    "swaps": COUNT,
    "tried": COUNT,
    "swap": (lambda v: v is None or isinstance(v, dict), "null or an object"),
    "swapped": (lambda v: v is None or isinstance(v, dict), "null or an object"),
    "racing": (lambda v: isinstance(v, list) and all(isinstance(race, dict) for race in v), "a list of objects"),
    "text": STR_LIST,
}
STEP_FIELDS: Mapping[str, Rule] = {"step": COUNT, "actor": STR, "did": STR_LIST}
"""One step of a counterexample's run (``steps``, checked when present: records written before counterexamples kept
their steps do not have them), with ``steps_left_out`` a whole number."""
CELL_FIELDS: Mapping[str, Rule] = {
    "variant": STR,
    "scenario": NAME,
    "granularity": STR,
    "status": (_one_of(*CELL_WORDS), "killed, survived or incomplete"),
    "schedules": COUNT,
    "schedule": STR,
    "why": STR,
}

EXPLORATION_FIELDS: Mapping[str, Rule] = {
    "name": NAME,
    "variant": STR,
    "default_variant": BOOL,
    "granularity": STR,
    "verdict": (_one_of(*VERDICT_WORDS), "PASS, FAIL or INCOMPLETE"),
    "schedules": COUNT,
    "pruned": COUNT,
    "naive_bound": (lambda v: isinstance(v, str) and v.isascii() and v.isdigit(), "a whole number, as a string"),
    "distinct": COUNT,
    "rows": (lambda v: _objects(v, ROW_FIELDS), "a list of {grade, reason, expect, schedules, example}"),
    "outcomes": (lambda v: _objects(v, OUTCOME_FIELDS), "a list of {observed, broken, schedules}"),
    "counterexample": (
        lambda v: v is None or _objects([v], COUNTEREXAMPLE_FIELDS),
        "null or {schedule, observed, why, replayed, preemptions}",
    ),
    "replay_command": STR,
    "preemption_bound": (lambda v: v is None or _is_count(v), "null or a whole number >= 0"),
    "max_schedules": (lambda v: _is_count(v) and v > 0, "a whole number > 0"),
    "bounded": BOOL,
    "budget_hit": BOOL,
    "problem": STR,
    "timing": TIMING,
}

SEARCH_FIELDS: Mapping[str, Rule] = {
    "strategy": (lambda v: v in ("portfolio", "dpor", "pct", "random", "ipb", "idb"), "a strategy's name"),
    "mode": (lambda v: v in ("find", "prove"), "find or prove"),
    "seed": (lambda v: _is_count(v), "a whole number >= 0"),
    "time_budget": (
        lambda v: v is None or (isinstance(v, int | float) and not isinstance(v, bool) and v > 0),
        "null or seconds > 0",
    ),
    "time_hit": (lambda v: isinstance(v, bool), "true or false"),
    "first_failure": (lambda v: v is None or (_is_count(v) and v > 0), "null or a whole number > 0"),
    "by_strategy": (lambda v: isinstance(v, dict) and all(map(_is_count, v.values())), "an object of counts"),
    "shrink_runs": (lambda v: _is_count(v), "a whole number >= 0"),
}

EXPLORATION_OPTIONAL: Mapping[str, Rule] = {
    "search": (
        lambda v: isinstance(v, dict) and not field_problems(v, SEARCH_FIELDS),
        "{strategy, mode, seed, time_budget, time_hit, first_failure, by_strategy, shrink_runs}",
    ),
    "counts": (
        lambda v: isinstance(v, dict) and all(isinstance(n, int) or n == "not computed" for n in v.values()),
        "an object of counts (whole numbers, or 'not computed' for the naive count)",
    ),
}

KILL_MATRIX_FIELDS: Mapping[str, Rule] = {
    "variants": STR_LIST,
    "scenarios": (lambda v: isinstance(v, list) and all(map(is_name, v)), "a list of names"),
    "correct": STR_LIST,
    "granularities": STR_LIST,
    "max_schedules": COUNT,
    "cells": (lambda v: _objects(v, CELL_FIELDS), "a list of {variant, scenario, granularity, status, ...}"),
    "problems": STR_LIST,
    "ok": BOOL,
}
KILL_MATRIX_OPTIONAL: Mapping[str, Rule] = {"partial": BOOL}

SETTINGS_FIELDS: Mapping[str, Rule] = {
    "granularities": STR_LIST,
    "preemption_bound": (lambda v: v is None or _is_count(v), "null or a whole number >= 0"),
    "max_schedules": COUNT,
}
SUMMARY_KEYS = ("name", "variant", "default_variant", "granularity", "verdict", "schedules", "pruned", "distinct")
"""The fields of an exploration record that ``run.json`` repeats, and the auditor compares."""
SUMMARY_ENTRY_FIELDS: Mapping[str, Rule] = {"file": STR, **{key: EXPLORATION_FIELDS[key] for key in SUMMARY_KEYS}}
CROSS_CHECK_ENTRY_FIELDS: Mapping[str, Rule] = {
    "file": STR,
    "runs": COUNT,
    "reached": COUNT,
    "model_gaps": COUNT,
    "not_checked": STR,
}
SUMMARY_ENTRY_OPTIONAL: Mapping[str, Rule] = {
    "cross_check": (
        lambda v: isinstance(v, dict) and not field_problems(v, CROSS_CHECK_ENTRY_FIELDS),
        "{file, runs, reached, model_gaps, not_checked}",
    ),
}
"""An exploration's entry has ``cross_check`` when the run cross-checked it (``--cross-check N``); its verdict is
then the one after the check (a MODEL GAP makes it FAIL)."""
SUMMARY_FIELDS: Mapping[str, Rule] = {
    "settings": (
        lambda v: v is None or (isinstance(v, dict) and not field_problems(v, SETTINGS_FIELDS)),
        "null or {granularities, preemption_bound, max_schedules}",
    ),
    "explorations": (
        lambda v: _objects(v, SUMMARY_ENTRY_FIELDS, SUMMARY_ENTRY_OPTIONAL),
        "a list of {file, name, variant, verdict, ...}",
    ),
    "verdicts": (
        lambda v: isinstance(v, dict) and not field_problems(v, dict.fromkeys(VERDICT_WORDS, COUNT)),
        "an object with PASS, FAIL and INCOMPLETE counts",
    ),
    "kill_matrix": (
        lambda v: (
            v is None
            or (isinstance(v, dict) and not field_problems(v, {"file": STR, "ok": BOOL, "problems": STR_LIST}))
        ),
        "null or {file, ok, problems}",
    ),
}

REACHED_FIELDS: Mapping[str, Rule] = {"observed": OBJECT, "broken": STR_LIST, "runs": COUNT}
CROSS_CHECK_FIELDS: Mapping[str, Rule] = {
    "name": NAME,
    "variant": STR,
    "granularity": STR,
    "exploration": STR,
    "runs": COUNT,
    "setup_failures": COUNT,
    "switch_interval": NUMBER,
    "reached": (lambda v: _objects(v, REACHED_FIELDS), "a list of {observed, broken, runs}"),
    "model_gaps": (lambda v: _objects(v, REACHED_FIELDS), "a list of {observed, broken, runs}"),
    "not_checked": STR,
    "verdict": (_one_of(*VERDICT_WORDS), "PASS, FAIL or INCOMPLETE"),
}
"""A cross-check file (``cross-check/<scenario>/<granularity>[.<variant>].json``): real runs, not replayed."""

RECORDS: Mapping[str, tuple[Mapping[str, Rule], Mapping[str, Rule]]] = {
    STARTED: (STARTED_FIELDS, STARTED_OPTIONAL),
    RUN: (RUN_FIELDS, RUN_OPTIONAL),
    SOURCES_JSON: (SOURCES_FIELDS, NONE),
    RESULT: (RESULT_FIELDS, RESULT_OPTIONAL),
    "check": (CHECK_FIELDS, CHECK_OPTIONAL),
    AUDIT: (AUDIT_FIELDS, AUDIT_OPTIONAL),
    "exploration": (EXPLORATION_FIELDS, EXPLORATION_OPTIONAL),
    KILL_MATRIX: (KILL_MATRIX_FIELDS, KILL_MATRIX_OPTIONAL),
    "exploration summary": (SUMMARY_FIELDS, NONE),
    "cross-check": (CROSS_CHECK_FIELDS, NONE),
}
"""Every record's required and optional fields, by the name ``docs/evidence.md`` gives its table
(``<!-- schema: NAME -->``): a file's path in the folder, or what the record is (a check, an exploration)."""
