# size: every consistency rule of explorations and the kill matrix, a function each, one checker
"""Consistency of exploration: each record agrees with itself, the kill matrix with its cells, ``run.json`` with both.

A record's counts must add up (rows and outcomes to its schedules), its verdict must be the one its rows and
outcomes make, and it must sit at the path its scenario, granularity and variant name. The kill matrix's problems
are asked again of its cells, and a cell that an exploration file also covers (same scenario, variant, granularity
and budget, no preemption bound) must say what that file says. ``run.json``'s summary must repeat every file.
Like the other cross-checks, these catch a tamper that rewrote ``SHA256SUMS``; re-execution catches the rest.

Over 300 lines: every cross-check of the exploration records, one rule a function, against one layout.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from lab.evidence.records.exploration import (
    COUNT_WORDS,
    NOT_COMPUTED,
    matrix_from_record,
    parse_exploration_path,
    record_verdict,
    summary_fails,
)
from lab.evidence.records.findings import Problem
from lab.evidence.records.layout import KILL_MATRIX, RUN
from lab.evidence.records.loading import load_record
from lab.evidence.records.safefs import FolderReader, printable
from lab.evidence.records.schema import (
    EXPLANATION_FIELDS,
    EXPLORATION_FIELDS,
    KILL_MATRIX_FIELDS,
    STEP_FIELDS,
    SUMMARY_FIELDS,
    SUMMARY_KEYS,
    VERDICT_WORDS,
    field_problems,
)
from lab.evidence.records.text import cell_name, shown
from lab.evidence.verify.cross_check import (
    check_cross_checks,
    check_summary_entry,
    checked_verdicts,
    is_cross_check_file,
)
from lab.scenarios.explaining import Explanation
from lab.scenarios.exploring import ExploreVerdict
from lab.scenarios.kill_matrix import CellStatus

_ALLOWED = ("ACCEPTABLE", "INTERESTING")


@dataclass(frozen=True, slots=True)
class ExplorationEvidence:
    """The exploration records that parsed (by path), the kill matrix's, and what ``run.json``'s summary implies.

    ``fails`` is whether the summary makes the run FAIL, ``None`` when there is no usable summary; ``unusable``
    names the exploration files that are present but could not be read or checked for their fields.
    """

    records: tuple[tuple[str, Mapping[str, Any]], ...] = ()
    kill_matrix: Mapping[str, Any] | None = None
    unusable: tuple[str, ...] = ()
    fails: bool | None = None
    cross_checks: tuple[tuple[str, Mapping[str, Any]], ...] = ()
    """The cross-check files that parsed (:mod:`lab.evidence.verify.cross_check`), by path."""
    cross_check_files: frozenset[str] = frozenset()
    """Every cross-check file present, whether it parsed or not."""

    @property
    def present(self) -> bool:
        """True when the folder holds any exploration at all."""
        return bool(self.records or self.kill_matrix is not None or self.unusable)


def is_exploration_file(rel: str) -> bool:
    """True for a path the exploration part of the layout allows (its cross-checks included)."""
    return rel == KILL_MATRIX or parse_exploration_path(rel) is not None or is_cross_check_file(rel)


def check_exploration(
    reader: FolderReader,
    listing: Mapping[str, str],
    run: Mapping[str, Any] | None,
    results: Mapping[str, Mapping[str, Any] | None],
    problems: list[Problem],
) -> ExplorationEvidence:
    """Check every exploration file and ``run.json``'s summary of them; ``results`` are the scenarios' records."""
    summary = _summary(run, problems)
    settings = summary["settings"] if summary is not None else None
    files = [rel for rel in listing if parse_exploration_path(rel) is not None]
    listed = run["scenarios"] if run is not None else list(results)
    records: list[tuple[str, Mapping[str, Any]]] = []
    unusable: list[str] = []
    for rel in files:
        record = load_record(reader, listing, rel, EXPLORATION_FIELDS, problems)
        if record is None:
            unusable.append(rel)
            continue
        _check_record(rel, record, listed, results, settings, problems)
        records.append((rel, record))
    kill = None
    if KILL_MATRIX in listing:
        kill = load_record(reader, listing, KILL_MATRIX, KILL_MATRIX_FIELDS, problems)
        if kill is None:
            unusable.append(KILL_MATRIX)
        else:
            _check_kill_matrix(kill, records, settings, problems)
    checks = check_cross_checks(reader, listing, dict(records), problems)
    present = frozenset(rel for rel in listing if is_cross_check_file(rel))
    if run is not None:
        checked = checked_verdicts(checks, problems)
        _check_summary(summary, files, dict(records), KILL_MATRIX in listing, kill, problems, checked, present)
    fails = summary_fails(summary) if summary is not None else None
    return ExplorationEvidence(tuple(records), kill, tuple(unusable), fails, checks, present)


def _summary(run: Mapping[str, Any] | None, problems: list[Problem]) -> Mapping[str, Any] | None:
    summary = run.get("exploration") if run is not None else None
    if summary is None:
        return None
    if not isinstance(summary, dict):
        problems.append(Problem(RUN, f"field 'exploration' is {printable(repr(summary)[:40])}, not null or an object"))
        return None
    reasons = field_problems(summary, SUMMARY_FIELDS)
    problems.extend(Problem(RUN, f"exploration {reason}") for reason in reasons)
    return None if reasons else summary


def _check_record(
    rel: str,
    record: Mapping[str, Any],
    listed: Sequence[str],
    results: Mapping[str, Mapping[str, Any] | None],
    settings: Mapping[str, Any] | None,
    problems: list[Problem],
) -> None:
    def say(reason: str) -> None:
        problems.append(Problem(rel, reason))

    where = parse_exploration_path(rel)
    name, variant, granularity = record["name"], record["variant"], record["granularity"]
    if where is not None and where != (name, granularity, variant):
        say(
            f"records {printable(name)} at {printable(granularity)} over {printable(variant) or 'no variant'}, "
            f"but its path says {where[0]} at {where[1]} over {where[2] or 'no variant'}"
        )
    if name not in listed:
        say(f"explores {name}, which run.json does not list among the scenarios that ran")
    result = results.get(name)
    if result is not None and record["default_variant"] != (variant == result["variant"]):
        say(
            f"default_variant is {str(record['default_variant']).lower()}, but the normal run of {name} used "
            f"variant {printable(result['variant']) or '(none)'}"
        )
    schedules = record["schedules"]
    for key, items in (("rows", record["rows"]), ("outcomes", record["outcomes"])):
        total = sum(item["schedules"] for item in items)
        if total != schedules:
            say(f"its {key} add up to {total} schedules, but it says {schedules}")
    if record["distinct"] != len(record["outcomes"]):
        say(f"distinct is {record['distinct']}, but it lists {len(record['outcomes'])} outcomes")
    if "counts" in record:  # absent in records written before explorations counted classes
        _check_counts(record, say)
    _check_verdict(record, say)
    bound, limit, runs = record["preemption_bound"], record["max_schedules"], schedules + record["pruned"]
    if runs > limit:
        say(f"ran {runs} schedules (pruned included), more than its max_schedules {limit}")
    if record["budget_hit"] and runs < limit:
        say(f"budget_hit is true, but it ran {runs} of its max_schedules {limit}")
    if record["bounded"] and bound is None:
        say("bounded is true, but it has no preemption_bound")
    if settings is not None and (
        granularity not in settings["granularities"]
        or limit != settings["max_schedules"]
        or bound != settings["preemption_bound"]
    ):
        say("does not use the explore settings run.json records")


def _check_counts(record: Mapping[str, Any], say: Callable[[str], None]) -> None:
    """The counts must be whole numbers that agree with the schedules: every execution run is a finished schedule
    or a pruned one, the redundant ones are among the pruned, and the finished ones fall into at least one and at
    most as many classes as there are of them."""
    counts = record["counts"]
    classes, executions, redundant, naive = COUNT_WORDS
    if not isinstance(counts, dict) or any(not _is_count(counts.get(key)) for key in (classes, executions, redundant)):
        say(f"counts must give {classes!r}, {executions!r} and {redundant!r} as whole numbers")
        return
    if not (_is_count(counts.get(naive)) or counts.get(naive) == NOT_COMPUTED):
        say(f"counts must give {naive!r} as a whole number or {NOT_COMPUTED!r}")
    schedules, pruned = record["schedules"], record["pruned"]
    if counts[executions] != schedules + pruned:
        say(f"{executions} is {counts[executions]}, but it ran {schedules} schedules and pruned {pruned}")
    if counts[redundant] > pruned:
        say(f"{redundant} is {counts[redundant]}, more than the {pruned} it pruned")
    if counts[classes] > schedules or (schedules > 0) != (counts[classes] > 0):
        say(f"{classes} is {counts[classes]}, but {schedules} schedules ran to their end")


def _is_count(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def _check_verdict(record: Mapping[str, Any], say: Callable[[str], None]) -> None:
    """The verdict the rows and outcomes make: FAIL when a FORBIDDEN or undeclared outcome was reached or an
    invariant broke, else PASS when nothing cut the search short, else INCOMPLETE."""
    verdict = record_verdict(record)  # the writer's own rule
    if record["verdict"] != verdict:
        say(f"verdict is {record['verdict']}, but its rows, outcomes, bounds and problem make it {verdict}")
    example = record["counterexample"]
    if (example is not None) != (record["verdict"] == ExploreVerdict.FAIL):
        say(f"verdict is {record['verdict']}, but it {'has a' if example is not None else 'has no'} counterexample")
    if example is not None and f"{record['name']}:{example['schedule']}" not in record["replay_command"]:
        say("replay_command does not replay its counterexample")
    if example is None and record["replay_command"]:
        say("has a replay_command but no counterexample")
    if example is not None and example.get("explanation") is not None:
        _check_explanation(record, example, say)
    if example is not None and "steps" in example:
        steps, left = example["steps"], example.get("steps_left_out")
        if not isinstance(steps, list) or not all(
            isinstance(step, dict) and not field_problems(step, STEP_FIELDS) for step in steps
        ):
            say("its counterexample's steps are not a list of {step, actor, did}")
        elif [step["step"] for step in steps] != list(range(len(steps))):
            say("its counterexample's steps are not numbered 0, 1, 2, ... in order")
        if not (isinstance(left, int) and not isinstance(left, bool) and left >= 0):
            say("its counterexample's steps_left_out is not a whole number >= 0")


def _check_explanation(record: Mapping[str, Any], example: Mapping[str, Any], say: Callable[[str], None]) -> None:
    """A counterexample's explanation must say in words what its fields say, be of a run that replayed, name two
    steps of different actors in the order they ran, and reach an outcome an allowed row of the record's table
    matches. Whether the swap really reaches it is for re-exploration, which runs it again."""
    data = example["explanation"]
    reasons = field_problems(data, EXPLANATION_FIELDS) if isinstance(data, dict) else ["is not an object"]
    try:
        explanation = None if reasons else Explanation.from_json(data)
    except (KeyError, TypeError, ValueError, AttributeError) as error:
        reasons.append(f"cannot be read: {printable(str(error))[:60]}")
    if reasons or explanation is None:
        say(f"its counterexample's explanation {reasons[0]}")
        return
    if data["text"] != list(explanation.sentences()):
        say("its counterexample's explanation text does not say what its fields say")
    if not example["replayed"]:
        say("its counterexample did not replay, but has an explanation")
    if (explanation.swap is None) != (explanation.swapped is None) or explanation.tried > explanation.swaps:
        say(
            "its counterexample's explanation has a swap without its swapped run (or the other way round), or tried "
            "more swaps than there are"
        )
    for race in [explanation.swap] if explanation.swap is not None else list(explanation.racing):
        if race.first.actor == race.second.actor or race.first.step >= race.second.step:
            say(
                f"its counterexample's explanation races {printable(race.first.actor)}'s step {race.first.step} "
                f"with {printable(race.second.actor)}'s step {race.second.step}: two actors, in the order they ran"
            )
    swapped = explanation.swapped
    if swapped is not None and not any(
        row["grade"] == swapped.grade
        and row["reason"] == swapped.reason
        and isinstance(row["expect"], dict)
        and all(key in swapped.observed and swapped.observed[key] == value for key, value in row["expect"].items())
        for row in record["rows"]
        if row["grade"] in _ALLOWED
    ):
        say(
            f"its counterexample's explanation says the swapped run is {printable(swapped.grade)[:20]}, but no "
            f"allowed row of its table with that reason matches what that run reached"
        )


def _check_kill_matrix(
    kill: Mapping[str, Any],
    records: Sequence[tuple[str, Mapping[str, Any]]],
    settings: Mapping[str, Any] | None,
    problems: list[Problem],
) -> None:
    def say(reason: str) -> None:
        problems.append(Problem(KILL_MATRIX, reason))

    seen: dict[tuple[str, str, str], Mapping[str, Any]] = {}
    for cell in kill["cells"]:
        key = (cell["variant"], cell["scenario"], cell["granularity"])
        if cell["variant"] not in kill["variants"] or cell["scenario"] not in kill["scenarios"]:
            say(f"has a cell for {cell_name(key)}, whose variant or scenario it does not list")
        if cell["granularity"] not in kill["granularities"]:
            say(f"has a cell for {cell_name(key)}, at a granularity it does not list")
        if key in seen:
            say(f"has two cells for {cell_name(key)}")
        seen[key] = cell
    if not isinstance(kill.get("partial", False), bool):
        say(f"field 'partial' is {printable(str(kill['partial']))}, not true or false")
    for variant in kill["correct"]:
        if variant not in kill["variants"]:
            say(f"calls {printable(variant)} correct, but does not list it among its variants")
    again = matrix_from_record(kill).problems()
    if len(again) != len(kill["problems"]) or kill["ok"] != (not kill["problems"]):
        new = [problem for problem in again if problem not in kill["problems"]] or again
        first = f"; first: {printable(new[0]).rstrip(': ')}" if new else ""
        say(
            f"records {len(kill['problems'])} problems and ok {str(kill['ok']).lower()}, but its cells make "
            f"{len(again)} problems{first}"
        )
    if settings is not None and kill["max_schedules"] != settings["max_schedules"]:
        say(f"max_schedules is {kill['max_schedules']}, but the explore settings say {settings['max_schedules']}")
    for rel, record in records:
        searched = record.get("search") or {}  # absent in records from before strategies: DPOR, proving
        matrix_search = searched.get("strategy", "dpor") == "dpor" and searched.get("mode", "prove") == "prove"
        if (
            record["preemption_bound"] is not None
            or record["max_schedules"] != kill["max_schedules"]
            or not matrix_search
        ):
            continue  # explored under other limits, or by another search than the matrix's: they need not agree
        cell = seen.get((record["variant"], record["name"], record["granularity"]))
        if cell is None:
            continue
        example = record["counterexample"]
        mine = (CellStatus.of(record["verdict"]).value, record["schedules"], example["schedule"] if example else "")
        theirs = (cell["status"], cell["schedules"], cell["schedule"])
        if mine != theirs:
            say(
                f"the cell {cell_name((record['variant'], record['name'], record['granularity']))} says "
                f"{_show_cell(theirs)}, but {rel} says {_show_cell(mine)}"
            )


def _check_summary(
    summary: Mapping[str, Any] | None,
    files: Sequence[str],
    records: Mapping[str, Mapping[str, Any]],
    has_kill: bool,
    kill: Mapping[str, Any] | None,
    problems: list[Problem],
    checked: Mapping[str, tuple[str, Mapping[str, Any]]],
    present: frozenset[str],
) -> None:
    if summary is None:
        for rel in [*files, *([KILL_MATRIX] if has_kill else []), *(rel for rel, _ in checked.values())]:
            problems.append(Problem(rel, "is not listed in run.json, which has no exploration summary"))
        return
    entries = summary["explorations"]
    listed = [entry["file"] for entry in entries]
    for rel in listed:
        if rel not in files:
            problems.append(Problem(printable(rel), "missing: run.json lists this exploration"))
    for rel in files:
        if rel not in listed:
            problems.append(Problem(rel, "is not listed in run.json's exploration summary"))
    if len(set(listed)) != len(listed):
        problems.append(Problem(RUN, "its exploration summary lists a file twice"))
    for entry in entries:
        record = records.get(entry["file"])
        check = checked.get(entry["file"])
        check_summary_entry(entry, check, present, problems)
        if record is None:
            continue
        if check is not None:  # its verdict is the one after real threads checked it: FAIL on a MODEL GAP
            record = {**record, "verdict": check[1]["verdict"]}
        differ = [key for key in SUMMARY_KEYS if entry[key] != record[key]]
        if differ:
            key = differ[0]
            problems.append(
                Problem(
                    RUN,
                    f"exploration {printable(entry['file'])}: {key} is "
                    f"{shown(entry[key])}, but the file says {shown(record[key])}",
                )
            )
    verdicts = [entry["verdict"] for entry in entries]
    counted = {verdict: verdicts.count(verdict) for verdict in VERDICT_WORDS}
    if summary["verdicts"] != counted:
        problems.append(
            Problem(
                RUN,
                f"exploration verdicts {shown(summary['verdicts'])} differ from its explorations' {counted}",
            )
        )
    recorded = summary["kill_matrix"]
    if recorded is None and has_kill:
        problems.append(Problem(KILL_MATRIX, "is not listed in run.json's exploration summary"))
    elif recorded is not None and not has_kill:
        problems.append(Problem(KILL_MATRIX, "missing: run.json records a kill matrix"))
    elif recorded is not None and kill is not None:
        if recorded["file"] != KILL_MATRIX:
            problems.append(Problem(RUN, f"its kill matrix is at {printable(recorded['file'])}, not {KILL_MATRIX}"))
        if (recorded["ok"], recorded["problems"]) != (kill["ok"], kill["problems"]):
            problems.append(
                Problem(
                    RUN,
                    f"kill matrix ok {str(recorded['ok']).lower()} with "
                    f"{len(recorded['problems'])} problems, but {KILL_MATRIX} says ok "
                    f"{str(kill['ok']).lower()} with {len(kill['problems'])}",
                )
            )


def _show_cell(cell: tuple[str, int, str]) -> str:
    schedule = f", {shown(cell[2])}" if cell[2] else ""
    return f"{cell[0]} in {cell[1]} schedules{schedule}"
