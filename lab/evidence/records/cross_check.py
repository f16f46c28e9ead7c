"""Cross-check records: what real threads reached, one file per exploration (``cross-check/``), and the verdict rule
that makes a MODEL GAP fail the exploration it checks.

Real runs are not deterministic, so nothing here is replayed: the audit checks a record's form (its fields, that
its runs add up, that each outcome is well formed, that it made as many runs as the command asked), and asks again,
from the records alone, which outcomes are MODEL GAPs (reached by real threads, matched by no outcome of the
exploration's record) and what that makes the exploration's verdict. It cannot check how many runs reached each
outcome; those counts are what one run of the command saw.

The exploration's record is the search's own and keeps the search's verdict (the audit explores it again and must
get the same bytes); the verdict the run counts, ``run.json``'s for that exploration, is :func:`checked_verdict`'s.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from lab.engine.core import Json
from lab.scenarios.cross_check import SWITCH_INTERVAL, CheckedExploration, outcome_matches
from lab.scenarios.exploring import ExploreVerdict

MODEL_GAP = "MODEL GAP"


def cross_check_record(found: CheckedExploration, exploration: str) -> dict[str, Json]:
    """The record of real threads' check of ``found``, whose own record is at ``exploration``."""
    check = found.cross_check
    reached = _outcomes(check.reached) if check is not None else []
    record: dict[str, Json] = {
        "name": found.name,
        "variant": found.variant,
        "granularity": found.granularity,
        "exploration": exploration,
        "runs": check.runs if check is not None else 0,
        "setup_failures": check.setup_failures if check is not None else 0,
        "switch_interval": SWITCH_INTERVAL,
        "reached": reached,
        "not_checked": found.not_checked,
    }
    outcomes = [json.loads(key) for key in found.outcomes]
    record["model_gaps"] = gaps(reached, outcomes)
    record["verdict"] = checked_verdict(str(found.search_verdict), record["model_gaps"])
    return record


def _outcomes(reached: Mapping[str, int]) -> list[Json]:
    found: list[Json] = []
    for key in sorted(reached):
        parsed = json.loads(key)
        found.append({"observed": parsed["observed"], "broken": parsed["broken"], "runs": reached[key]})
    return found


def gaps(reached: Sequence[Any], explored: Sequence[Any]) -> list[Json]:
    """The reached outcomes (``{observed, broken, runs}``) that no explored outcome (``{observed, broken, ...}``)
    matches, in the order given: the MODEL GAPs. An explored outcome that is not an object of an observed object
    and a broken list matches nothing."""
    usable = [
        e
        for e in explored
        if isinstance(e, Mapping) and isinstance(e.get("observed"), Mapping) and isinstance(e.get("broken"), list)
    ]
    return [dict(r) for r in reached if not any(outcome_matches(r, e) for e in usable)]


def checked_verdict(verdict: str, model_gaps: Sequence[object]) -> str:
    """The exploration's verdict after real threads checked it: FAIL when they reached an outcome it never did (the
    model is wrong about the program, so nothing it proved holds), else the search's verdict ``verdict``."""
    return str(ExploreVerdict.FAIL) if model_gaps else verdict


def summary_entry(rel: str, record: Mapping[str, Any]) -> dict[str, Json]:
    """What ``run.json``'s summary of an exploration says of its cross-check at ``rel``."""
    return {
        "file": rel,
        "runs": record["runs"],
        "reached": len(record["reached"]),
        "model_gaps": len(record["model_gaps"]),
        "not_checked": record["not_checked"],
    }


def cross_check_line(entry: Mapping[str, Any]) -> str:
    """One line of a report for a summary's cross-check entry: its runs, outcomes and MODEL GAPs, or why not."""
    if entry["not_checked"]:
        return f"not cross-checked: {entry['not_checked']}"
    found = entry["model_gaps"]
    gap = f"{MODEL_GAP}: {found} of them no explored schedule reached" if found else f"no {MODEL_GAP}"
    reached = entry["reached"]
    return f"{entry['runs']} real runs, {reached} outcome{'' if reached == 1 else 's'} reached, {gap}"


def checks_of(run: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    """``run.json``'s cross-check of each exploration, by the exploration's path, with the verdict after it
    (``verdict``): what the reports show beside each exploration (none for a run without ``--cross-check``)."""
    summary = run.get("exploration")
    entries = summary.get("explorations") if isinstance(summary, Mapping) else None
    found: dict[str, dict[str, Any]] = {}
    for entry in entries if isinstance(entries, list) else []:
        if isinstance(entry, Mapping) and isinstance(entry.get("cross_check"), Mapping):
            found[str(entry["file"])] = {**entry["cross_check"], "verdict": entry["verdict"]}
    return found
