"""Consistency and completeness of the cross-checks (``--cross-check N``): their form, never their counts.

Real runs are not deterministic, so a cross-check file cannot be replayed; what the audit can check, it does: each
file's fields (:data:`~lab.evidence.records.schema.CROSS_CHECK_FIELDS`), that it sits at the path of the exploration
it checks and that exploration is in the folder, that its runs add up (every run reached one outcome or its setup
raised), that each outcome is well formed and listed once, that its MODEL GAPs are exactly the outcomes no outcome of
the exploration's record matches (asked again of the records), that its verdict is the one they make, that
``run.json``'s summary says what it says, and (from the recorded command) that every exploration was checked with
the number of runs the command gives, or names the reason its scenario's archived source gives for not being
checked. A forger who drops the files, or keeps a MODEL GAP under a PASS, is caught; one who rewrites what real
threads reached, consistently, is not: only running them again can say, and it would say something else anyway.
"""

from __future__ import annotations

import ast
import json
from collections.abc import Mapping, Sequence
from typing import Any

from lab.evidence.records.cross_check import checked_verdict, gaps, summary_entry
from lab.evidence.records.findings import Problem
from lab.evidence.records.layout import (
    RUN,
    SCENARIOS,
    cross_check_path,
    exploration_path,
    parse_cross_check_path,
    parse_exploration_path,
)
from lab.evidence.records.loading import load_record
from lab.evidence.records.safefs import FolderReader, printable
from lab.evidence.records.schema import CROSS_CHECK_FIELDS
from lab.evidence.records.text import shown

_GRANULARITIES = ("probe", "line", "instruction")


def is_cross_check_file(rel: str) -> bool:
    """True for a path the cross-check part of the layout allows."""
    return parse_cross_check_path(rel, _GRANULARITIES) is not None


def check_cross_checks(
    reader: FolderReader,
    listing: Mapping[str, str],
    records: Mapping[str, Mapping[str, Any]],
    problems: list[Problem],
) -> tuple[tuple[str, Mapping[str, Any]], ...]:
    """Every cross-check file that parsed, by path, each checked against itself and the exploration record it checks
    (``records``: the exploration records, by path)."""
    found: list[tuple[str, Mapping[str, Any]]] = []
    for rel in listing:
        where = parse_cross_check_path(rel, _GRANULARITIES)
        if where is None:
            continue
        record = load_record(reader, listing, rel, CROSS_CHECK_FIELDS, problems)
        if record is not None:
            _check_record(rel, where, record, records, problems)
            found.append((rel, record))
    return tuple(found)


def _check_record(
    rel: str,
    where: tuple[str, str, str],
    record: Mapping[str, Any],
    records: Mapping[str, Mapping[str, Any]],
    problems: list[Problem],
) -> None:
    def say(reason: str) -> None:
        problems.append(Problem(rel, reason))

    name, granularity, variant = record["name"], record["granularity"], record["variant"]
    if where != (name, granularity, variant):
        say(f"checks {printable(name)} at {printable(granularity)}, but its path says {where[0]} at {where[1]}")
    explored = exploration_path(where[0], where[1], where[2])
    if record["exploration"] != explored:
        say(f"checks the exploration {shown(record['exploration'])}, but its path is that of {explored}'s")
    reached = record["reached"]
    runs = sum(item["runs"] for item in reached)
    if runs + record["setup_failures"] != record["runs"]:
        say(
            f"its outcomes were reached in {runs} runs and {record['setup_failures']} setups raised, but it "
            f"says it made {record['runs']} runs"
        )
    keys = [json.dumps([item["observed"], item["broken"]], sort_keys=True) for item in reached]
    if any(item["runs"] == 0 for item in reached) or len(set(keys)) != len(keys):
        say("lists an outcome no run reached, or one outcome twice")
    if record["not_checked"] and (record["runs"] or reached):
        say("says its scenario was not cross-checked, but records real runs")
    if not record["not_checked"] and record["runs"] == 0:
        say("made no real run, and does not say why its scenario was not cross-checked")
    exploration = records.get(explored)
    if exploration is None:
        say(f"checks {explored}, which the folder does not hold (or which could not be read)")
        return
    derived = gaps(reached, exploration["outcomes"])
    if record["model_gaps"] != derived:
        say(
            f"lists {len(record['model_gaps'])} MODEL GAPs, but {len(derived)} of the outcomes it reached are "
            f"outcomes no schedule of {explored} reached"
        )
    verdict = checked_verdict(str(exploration["verdict"]), derived)
    if record["verdict"] != verdict:
        say(f"verdict is {shown(record['verdict'])}, but {explored}'s verdict and its MODEL GAPs make it {verdict}")


def checked_verdicts(
    checks: Sequence[tuple[str, Mapping[str, Any]]], problems: list[Problem]
) -> dict[str, tuple[str, Mapping[str, Any]]]:
    """The cross-checks by the exploration they check (two of one: a problem)."""
    by_exploration: dict[str, tuple[str, Mapping[str, Any]]] = {}
    for rel, record in checks:
        if record["exploration"] in by_exploration:
            problems.append(Problem(rel, f"is a second cross-check of {shown(record['exploration'])}"))
        by_exploration.setdefault(str(record["exploration"]), (rel, record))
    return by_exploration


def check_summary_entry(
    entry: Mapping[str, Any],
    check: tuple[str, Mapping[str, Any]] | None,
    present: frozenset[str],
    problems: list[Problem],
) -> None:
    """``run.json``'s entry for one exploration says what its cross-check file (``check``, if any) says;
    ``present``: every cross-check file in the folder (one that could not be read is reported as such)."""
    listed = entry.get("cross_check")
    what = f"exploration {printable(str(entry['file']))}"
    if check is None:
        if listed is not None and listed["file"] not in present:
            problems.append(Problem(printable(str(listed["file"])), f"missing: run.json's {what} lists it"))
        return
    rel, record = check
    if listed is None:
        problems.append(Problem(rel, f"is not listed in run.json's {what}"))
    elif listed != summary_entry(rel, record):
        made = shown(summary_entry(rel, record), 100)
        problems.append(Problem(RUN, f"{what}: its cross_check is {shown(listed, 100)}, but {rel} makes {made}"))


def check_cross_check_contents(
    *,
    cross_check: int,
    explorations: Sequence[str],
    checks: Sequence[tuple[str, Mapping[str, Any]]],
    present: frozenset[str] = frozenset(),
    sources: Mapping[str, bytes] | None,
    text: str,
    problems: list[Problem],
) -> None:
    """The command's ``--cross-check N`` (``cross_check``; 0 for none) made a cross-check of every exploration
    (``explorations``: those the folder holds), each of N runs or naming the reason its scenario's archived source
    gives for not being checked, and no other."""
    by_path = dict(checks)
    wanted: list[str] = []
    for rel in explorations:
        where = parse_exploration_path(rel, _GRANULARITIES)
        if where is not None and cross_check:
            wanted.append(cross_check_path(*where))
    for rel in wanted:
        record = by_path.get(rel)
        if record is None:
            if rel not in present:  # present but unreadable: reported as such
                problems.append(Problem(rel, f"missing: its command ({text}) cross-checks every exploration"))
            continue
        source = sources.get(f"{SCENARIOS}{record['name']}.py") if sources is not None else None
        reason = declared_reason(source) if source is not None else None
        if record["not_checked"]:
            if reason is not None and record["not_checked"] != reason:
                problems.append(
                    Problem(
                        rel,
                        f"says {printable(str(record['name']))} is not cross-checked "
                        f"({shown(record['not_checked'], 60)}), but its archived source says "
                        f"{shown(reason, 60) if reason else 'nothing of it'}",
                    )
                )
        elif record["runs"] != cross_check:
            problems.append(
                Problem(rel, f"made {shown(record['runs'])} real runs, but its command ({text}) asks {cross_check}")
            )
    for rel in sorted((set(by_path) | present) - set(wanted)):
        problems.append(Problem(rel, f"is a cross-check its command ({text}) does not make"))


def declared_reason(source: bytes) -> str | None:
    """What a scenario file's source says is why it cannot be cross-checked (a class's ``not_cross_checked`` string,
    read without running it): ``""`` when it says nothing, ``None`` when the source cannot be read."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return None
    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef):
            for statement in node.body:
                if (
                    isinstance(statement, ast.Assign)
                    and any(isinstance(t, ast.Name) and t.id == "not_cross_checked" for t in statement.targets)
                    and isinstance(statement.value, ast.Constant)
                    and isinstance(statement.value.value, str)
                ):
                    return statement.value.value
    return ""
