"""Re-exploration: the archived code explores every recorded exploration again, and rebuilds the kill matrix.

Both halves of this part of the re-execution protocol (:mod:`lab.evidence.reexecute.rerun`) live here. The auditor adds
``explorations`` and ``kill_matrix`` to the child's request only when the folder has them, so the request for a
folder without exploration is the one it always was. The child (:func:`reexplore`, run from the archive) explores
each one with its recorded granularity, variant, preemption bound and budget, and answers with the record the
archived :mod:`lab.evidence.records.exploration` makes of it; the auditor (:func:`compare_exploration`,
:func:`compare_kill_matrix`) requires the same verdicts, counts, rows, outcomes and counterexamples, and the same
cells. Exploration is deterministic, so any difference is a difference in the code or in the record.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from lab.evidence.records.findings import Problem
from lab.evidence.records.layout import KILL_MATRIX, scenario_source_path
from lab.evidence.records.safefs import printable
from lab.evidence.records.text import cell_name, shown
from lab.text import one_line

ALLOWANCE_CAP_SECONDS = 600.0
"""The most time re-exploration adds to the child's timeout, however slow the recorded explorations were."""
COMPARED = (
    "verdict",
    "schedules",
    "pruned",
    "distinct",
    "naive_bound",
    "bounded",
    "budget_hit",
    "rows",
    "outcomes",
    "counterexample",
    "replay_command",
    "problem",
    "counts",
    "search",
)
"""The fields of an exploration record a re-exploration must reproduce: all but its timing and default flag (and
the settings it was asked to explore with). ``counts`` is absent from records written before it: a record without
it is compared as ``null``, so deleting it from a record the compared code would count is a difference too."""
_CLOCKED = frozenset({"problem", "budget_hit", "search"})
"""Fields of a record cut by its time budget that say so: its re-exploration runs as many executions with no
clock, so every other field must come out the same, and these say "the budget" instead of "the time budget"."""
_CELL = ("status", "schedules", "schedule", "why")
_MATRIX = ("variants", "scenarios", "correct", "granularities", "max_schedules")


@dataclass(frozen=True, slots=True)
class ExpectedExploration:
    """One archived exploration record (already checked for its fields), and the file it came from."""

    file: str
    record: Mapping[str, Any]

    def request(self) -> dict[str, Any]:
        """What the child needs to explore it again."""
        keys = ("name", "variant", "granularity", "preemption_bound", "max_schedules", "default_variant")
        runs = self.record["schedules"] + self.record["pruned"]
        return {
            "file": self.file,
            **{key: self.record[key] for key in keys},
            "search": self.record.get("search"),
            "executions_run": runs,
        }


def kill_matrix_request(record: Mapping[str, Any]) -> dict[str, Any]:
    """What the child needs to rebuild the kill matrix."""
    wanted = {key: record[key] for key in ("scenarios", "granularities", "max_schedules")}
    if record.get("partial") is True:
        wanted["partial"] = True
    return wanted


def allowance(explorations: Sequence[ExpectedExploration], kill_matrix: Mapping[str, Any] | None) -> float:
    """Seconds to add to the child's timeout: three times each recorded exploration's time plus one second, and for
    the kill matrix (which records no time) a fiftieth of a second per schedule and half a second per cell; capped,
    so a tampered timing cannot make the audit wait for ever."""
    seconds = sum(3.0 * max(float(item.record["timing"]["seconds"]), 0.0) + 1.0 for item in explorations)
    if kill_matrix is not None:
        seconds += sum(0.02 * cell["schedules"] + 0.5 for cell in kill_matrix["cells"])
    return min(seconds, ALLOWANCE_CAP_SECONDS)


def reexplore(root: Path, request: Mapping[str, Any]) -> dict[str, Any]:
    """The child's side: explore every requested exploration again, rebuild the kill matrix if asked.

    ``root`` holds the archived ``scenarios/``. Each answer is an exploration record, or ``{"error": one line}``.
    """
    from lab.evidence.records.exploration import exploration_record, kill_matrix_record
    from lab.scenarios.exploring import explore_scenario
    from lab.scenarios.kill_matrix import build_kill_matrix

    loaded: dict[str, Any] = {}
    answers: list[dict[str, Any]] = []
    for item in request.get("explorations") or ():
        scenario = _load(root, item.get("name"), loaded)
        if isinstance(scenario, str):
            answers.append({"error": scenario})
            continue
        searched = item.get("search") or {}
        timed = searched.get("time_hit") is True  # cut by the clock: run as many executions, with no clock
        runs = item["max_schedules"]
        if timed:
            runs = max(int(item.get("executions_run") or 1), 1)
        try:
            found = explore_scenario(
                scenario,
                granularity=item["granularity"],
                variant=item["variant"] or None,
                preemption_bound=item["preemption_bound"],
                max_schedules=runs,
                strategy=searched.get("strategy", "dpor"),
                mode=searched.get("mode", "prove"),
                seed=searched.get("seed", 0),
                seconds=None if timed else searched.get("time_budget"),
            )
        except Exception as error:  # the archive's own failure, reported as a difference, never raised
            answers.append({"error": one_line(error)})
            continue
        answers.append(exploration_record(found, default_variant=bool(item.get("default_variant"))))
    report: dict[str, Any] = {"explorations": answers}
    wanted = request.get("kill_matrix")
    if wanted is not None:
        races = [_load(root, name, loaded) for name in wanted["scenarios"]]
        failed = next((race for race in races if isinstance(race, str)), None)
        if failed is not None:
            report["kill_matrix"] = {"error": failed}
        else:
            try:
                matrix = build_kill_matrix(
                    races,
                    granularities=tuple(wanted["granularities"]),
                    max_schedules=wanted["max_schedules"],
                    partial=wanted.get("partial", False) is True,
                )
                report["kill_matrix"] = kill_matrix_record(matrix, max_schedules=wanted["max_schedules"])
            except Exception as error:
                report["kill_matrix"] = {"error": one_line(error)}
    return report


def _load(root: Path, name: object, loaded: dict[str, Any]) -> Any:
    """The loaded scenario ``name`` from the archive (once per name), or a one-line reason it does not load."""
    from lab.evidence.records.schema import is_name
    from lab.scenarios.loader import BrokenScenario, load

    if not isinstance(name, str) or not is_name(name):
        return f"{name!r} is not a scenario name"
    if name not in loaded:
        scenario = load(root / "scenarios" / f"{name}.py")
        if isinstance(scenario, BrokenScenario):
            loaded[name] = f"{scenario_source_path(name)} does not load: {scenario.problem}"
        else:
            loaded[name] = scenario
    return loaded[name]


def compare_exploration(item: ExpectedExploration, got: object) -> list[Problem]:
    """One problem per field of ``item`` that the re-exploration ``got`` did not reproduce."""
    if not isinstance(got, dict):
        return [Problem(item.file, "re-execution returned nothing for this exploration")]
    if "error" in got:
        return [Problem(item.file, f"re-exploration failed: {printable(str(got['error']))}")]
    problems = []
    searched = item.record.get("search")
    timed = isinstance(searched, dict) and searched.get("time_hit") is True
    for key in COMPARED:
        recorded, fresh = item.record.get(key), got.get(key)
        if timed and key in _CLOCKED:  # where the clock stopped it: the same executions, but said another way
            continue
        if not _same(recorded, fresh):
            problems.append(Problem(item.file, "re-exploration gave " + _difference(key, recorded, fresh)))
    return problems


def compare_kill_matrix(recorded: Mapping[str, Any], got: object) -> list[Problem]:
    """One problem per list, cell and problem of the kill matrix that the rebuilt one ``got`` differs in."""
    if not isinstance(got, dict):
        return [Problem(KILL_MATRIX, "re-execution did not rebuild the kill matrix")]
    if "error" in got:
        return [Problem(KILL_MATRIX, f"rebuilding the kill matrix failed: {printable(str(got['error']))}")]
    problems = [
        Problem(KILL_MATRIX, f"re-execution gave {key} {shown(got.get(key), 80)}; recorded {shown(recorded[key], 80)}")
        for key in _MATRIX
        if not _same(recorded[key], got.get(key))
    ]
    fresh = {_key(cell): cell for cell in got.get("cells") or () if isinstance(cell, dict)}
    for cell in recorded["cells"]:
        key = _key(cell)
        again = fresh.pop(key, None)
        if again is None:
            problems.append(Problem(KILL_MATRIX, f"re-execution has no cell {cell_name(key)}"))
        elif not all(_same(cell[field], again.get(field)) for field in _CELL):
            problems.append(
                Problem(
                    KILL_MATRIX,
                    f"re-execution gave the cell {cell_name(key)} {_show_cell(again)}; recorded {_show_cell(cell)}",
                )
            )
    for key in fresh:
        problems.append(Problem(KILL_MATRIX, f"re-execution has a cell {cell_name(key)} the record lacks"))
    if not _same(recorded["problems"], got.get("problems")):
        problems.append(
            Problem(
                KILL_MATRIX,
                f"re-execution gave problems {shown(got.get('problems'), 80)}; "
                f"recorded {shown(recorded['problems'], 80)}",
            )
        )
    return problems


def _difference(key: str, recorded: Any, fresh: Any) -> str:
    if key in {"rows", "outcomes"} and isinstance(fresh, list) and len(fresh) == len(recorded):
        index = next(i for i, (a, b) in enumerate(zip(recorded, fresh, strict=True)) if not _same(a, b))
        old, new = recorded[index], fresh[index]
        label = (
            f"row {index + 1} ({printable(str(old['grade']))}: {shown(old['reason'], 80)})"
            if key == "rows"
            else f"outcome {index + 1}"
        )
        if isinstance(new, dict) and _same({**old, "schedules": 0}, {**new, "schedules": 0}):
            return f"{label} in {shown(new.get('schedules'), 80)} schedules; recorded {old['schedules']}"
        return f"{label} as {shown(new, 80)}; recorded {shown(old, 80)}"
    if key in {"rows", "outcomes"}:
        return f"{len(fresh) if isinstance(fresh, list) else 'no'} {key}; recorded {len(recorded)}"
    if key == "counterexample":
        old, new = (v.get("schedule") if isinstance(v, dict) else None for v in (recorded, fresh))
        if old is not None and _same(old, new):  # the same schedule, something else about it differs
            explained = _explanation_difference(recorded, fresh)
            if explained:
                return explained
            return f"counterexample {shown(fresh, 80)}; recorded {shown(recorded, 80)}"
        return (
            f"counterexample {'schedule ' + shown(new, 80) if new is not None else 'none'}; recorded "
            f"{'schedule ' + shown(old, 80) if old is not None else 'none'}"
        )
    return f"{key} {shown(fresh, 80)}; recorded {shown(recorded, 80)}"


def _explanation_difference(recorded: Mapping[str, Any], fresh: Mapping[str, Any]) -> str:
    """When only the counterexamples' explanations differ: the first sentence (or field) that does, else ""."""
    without = [{key: value for key, value in example.items() if key != "explanation"} for example in (recorded, fresh)]
    if not _same(*without):
        return ""
    old, new = recorded.get("explanation"), fresh.get("explanation")
    if not (isinstance(old, dict) and isinstance(new, dict)):
        return f"counterexample explanation {shown(new, 80)}; recorded {shown(old, 80)}"
    old_text, new_text = old.get("text"), new.get("text")
    if isinstance(old_text, list) and isinstance(new_text, list) and not _same(old_text, new_text):
        pairs = zip([*old_text, *[""] * len(new_text)], [*new_text, *[""] * len(old_text)], strict=False)
        was, now = next((a, b) for a, b in pairs if a != b)
        return (
            f"counterexample explanation saying {shown(now or '(nothing)', 80)}; "
            f"recorded {shown(was or '(nothing)', 80)}"
        )
    key = next((key for key in sorted({*old, *new}) if not _same(old.get(key), new.get(key))), "")
    return (
        f"counterexample explanation {key} {shown(new.get(key), 80)}; recorded {shown(old.get(key), 80)}" if key else ""
    )


def _same(one: Any, two: Any) -> bool:
    """Equal as JSON: ``true`` is not ``1`` here, as it is for Python's ``==``."""
    return json.dumps(one, sort_keys=True) == json.dumps(two, sort_keys=True)


def _key(cell: Mapping[str, Any]) -> tuple[str, str, str]:
    return str(cell.get("variant")), str(cell.get("scenario")), str(cell.get("granularity"))


def _show_cell(cell: Mapping[str, Any]) -> str:
    schedule = f", schedule {shown(cell.get('schedule'), 80)}" if cell.get("schedule") else ""
    return f"{printable(str(cell.get('status')))} in {shown(cell.get('schedules'), 80)} schedules{schedule}"
