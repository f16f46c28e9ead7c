"""Completeness, re-derived: what the folder must hold, from the command ``run.json`` records and the archive.

Sums and cross-checks prove that the files agree with each other; they cannot prove that none is missing. A forger
who drops a failing exploration, the kill matrix or one of its columns, adjusting every total consistently, leaves a
folder that agrees with itself. So the auditor reads the recorded command with the command line's own grammar
(:mod:`lab.commandline`) and derives what it must have made (:mod:`lab.evidence.records.plan`): the scenarios it
selected, every exploration (scenario x granularity x variant), the kill matrix with every cell, and whether it may
be partial, and (``--cross-check N``) a cross-check of every exploration with N real runs. A command the grammar
does not know (``[]``, ``lab list``, a replay, another program) is a problem,
never a reason to skip the check.

What each scenario file declares (its variants, whether it is pinned) is only known by loading it, which runs its
code; the re-execution's workers do that (:mod:`lab.evidence.reexecute.isolation`) and report it. Without them (no
re-execution, or an archive whose code does not report it) the derivation uses what the verified records say: each
scenario's first variant, as its ``result.json`` records it; the matrix's columns, correct variants, granularities
and the cells of those first variants are then still required, its mutant rows only checked for being listed.
"""

from __future__ import annotations

import ast
from collections.abc import Collection, Mapping, Sequence
from typing import Any

from lab.commandline import RunRequest, parse_recorded
from lab.errors import UsageError
from lab.evidence.records.findings import Problem
from lab.evidence.records.layout import KILL_MATRIX, RUN, SCENARIOS, parse_exploration_path
from lab.evidence.records.plan import MATRIX_GRANULARITIES, ExpectedMatrix, ScenarioFacts, expected_contents
from lab.evidence.records.safefs import printable
from lab.evidence.records.sources import scenario_files
from lab.evidence.records.text import cell_name, shown
from lab.evidence.verify.cross_check import check_cross_check_contents
from lab.evidence.verify.explore_checks import ExplorationEvidence

_GRANULARITIES = ("probe", "line", "instruction")


def _command_text(command: object) -> str:
    words = command if isinstance(command, list) else [command]
    return printable(" ".join(str(word) for word in words))


def check_command(
    run: Mapping[str, Any] | None,
    archived: Mapping[str, str] | None,
    problems: list[Problem],
    helpers: Collection[str] = frozenset(),
) -> RunRequest | None:
    """Read ``run.json``'s command with the command line's grammar; check that the scenarios and broken files it
    lists are exactly those the command selected, in run order, and that it explored exactly when the command
    asked, with the settings the command gave. The request, or ``None`` (a problem says why)."""
    if run is None:
        return None
    command = run["command"]
    try:
        request = parse_recorded(command)
    except UsageError as error:
        problems.append(
            Problem(
                RUN,
                f"its command ({_command_text(command)}) {printable(str(error))}: only a command that runs "
                "scenarios (run.py --out, lab run, lab explore) makes an evidence folder, and what the folder "
                "must hold is derived from it",
            )
        )
        return None
    if archived is not None:
        _check_selection(run, request, scenario_files(archived, helpers), problems)
    summary = run.get("exploration")
    text = _command_text(command)
    if not request.explore and summary is not None:
        problems.append(Problem(RUN, f"has an exploration summary, but its command ({text}) does not explore"))
    elif request.explore and summary is None:
        problems.append(
            Problem(RUN, f"has no exploration summary, but its command ({text}) explores: the exploration is missing")
        )
    elif request.explore and isinstance(summary, dict):
        wanted = {
            "granularities": list(request.granularities),
            "preemption_bound": request.preemptions,
            "max_schedules": request.max_schedules,
        }
        if summary.get("settings") != wanted:
            problems.append(
                Problem(
                    RUN,
                    f"its exploration settings {shown(summary.get('settings'), 100)} are not those its command "
                    f"({text}) gives: {shown(wanted, 100)}",
                )
            )
    return request


def _check_selection(run: Mapping[str, Any], request: RunRequest, files: list[str], problems: list[Problem]) -> None:
    expected = list(request.selected) or files
    broken = [entry["name"] for entry in run["broken"]]
    ran = [name for name in expected if name not in broken]
    if run["scenarios"] != ran or not set(broken) <= set(expected):
        shown_names = ", ".join(printable(name) for name in expected)
        problems.append(
            Problem(
                RUN,
                f"its command ({_command_text(run['command'])}) runs {shown_names or 'nothing'}, "
                f"but scenarios and broken name "
                f"{', '.join(printable(n) for n in [*run['scenarios'], *broken])}",
            )
        )


def check_contents(
    run: Mapping[str, Any] | None,
    request: RunRequest | None,
    explored: ExplorationEvidence,
    results: Mapping[str, Mapping[str, Any] | None],
    files: Sequence[str],
    facts: Mapping[str, ScenarioFacts] | None,
    problems: list[Problem],
    sources: Mapping[str, bytes] | None = None,
) -> None:
    """Every exploration and kill-matrix cell the command made is in the folder, and nothing else is.

    ``files``: the archived scenario files. ``facts``: what each declares, from the re-execution (``None``: not
    known; the records' first variants stand in, and the check says less, as the module says)."""
    if run is None or request is None or not request.explore or not isinstance(run.get("exploration"), dict):
        return
    selected = [name for name in run["scenarios"] if isinstance(name, str)]
    broken = {entry["name"] for entry in run["broken"]}
    derived = facts is not None
    known: Mapping[str, ScenarioFacts] = (
        facts if facts is not None else _from_records(selected, results, request.variant, sources or {})
    )
    not_run = frozenset(
        name for name, result in results.items() if result is not None and result["run_status"] == "NOT_RUN"
    )
    expected = expected_contents(
        selected=selected,
        every=[name for name in files if name not in broken],
        facts=known,
        granularities=request.granularities,
        variant=request.variant,
        not_run=not_run,
    )
    optional = set(expected.optional)
    if not derived and request.variant is not None:
        optional |= set(expected.explorations)  # which race scenarios declare the variant, only their code says
    text = _command_text(run["command"])
    present = {rel for rel, _ in explored.records} | {rel for rel in explored.unusable if rel != KILL_MATRIX}
    for rel in expected.explorations:
        if rel not in present and rel not in optional:
            where = parse_exploration_path(rel, _GRANULARITIES)
            what = f"{where[0]} at {where[1]}" + (f" over {where[2]}" if where and where[2] else "") if where else rel
            problems.append(Problem(rel, f"missing: its command ({text}) explores {what}"))
    for rel in sorted(present - set(expected.explorations)):
        problems.append(Problem(rel, f"is an exploration its command ({text}) does not make"))
    check_cross_check_contents(
        cross_check=request.cross_check,
        explorations=[rel for rel, _ in explored.records],
        checks=explored.cross_checks,
        present=explored.cross_check_files,
        sources=sources,
        text=text,
        problems=problems,
    )
    has_matrix = KILL_MATRIX in explored.unusable or explored.kill_matrix is not None
    if expected.kill_matrix is None:
        if has_matrix:
            problems.append(Problem(KILL_MATRIX, f"is a kill matrix its command ({text}) does not build"))
        return
    if not has_matrix:
        races = ", ".join(expected.kill_matrix.scenarios)
        problems.append(
            Problem(KILL_MATRIX, f"missing: its command ({text}) explores race scenarios ({races}), so it built one")
        )
        return
    if explored.kill_matrix is not None:
        _check_matrix(explored.kill_matrix, expected.kill_matrix, request, problems, exact=derived)


def _from_records(
    selected: Sequence[str],
    results: Mapping[str, Mapping[str, Any] | None],
    variant: str | None,
    sources: Mapping[str, bytes],
) -> dict[str, ScenarioFacts]:
    """What the verified records say each scenario declares: its first variant, the one its normal run used, and
    (for a race scenario) the variant the command explores, which it may declare; whether it is pinned, from its
    archived source (read, not run: :func:`pinned_source`)."""
    facts = {}
    for name in selected:
        result = results.get(name)
        if result is not None and isinstance(result.get("variant"), str):
            first = result["variant"]
            more = (variant,) if first and variant is not None and variant != first else ()
            pinned = pinned_source(sources.get(f"{SCENARIOS}{name}.py", b""))
            facts[name] = ScenarioFacts((first, *more) if first else (), pinned)
    return facts


def pinned_source(source: bytes) -> bool:
    """Whether a scenario file's source pins it to one schedule, read without running it: it calls
    ``pinned_scenario(...)`` (as every saved counterexample does) or a class of it assigns ``pin``."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return False
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            called = node.func
            name = called.id if isinstance(called, ast.Name) else getattr(called, "attr", "")
            if name == "pinned_scenario":
                return True
        if isinstance(node, ast.ClassDef):
            for statement in node.body:
                targets = statement.targets if isinstance(statement, ast.Assign) else []
                if isinstance(statement, ast.AnnAssign):
                    targets = [statement.target]
                if any(isinstance(target, ast.Name) and target.id == "pin" for target in targets):
                    return True
    return False


def _check_matrix(
    record: Mapping[str, Any], expected: ExpectedMatrix, request: RunRequest, problems: list[Problem], *, exact: bool
) -> None:
    def say(reason: str) -> None:
        problems.append(Problem(KILL_MATRIX, reason))

    for key, wanted in (
        ("scenarios", list(expected.scenarios)),
        ("correct", list(expected.correct)),
        ("granularities", list(MATRIX_GRANULARITIES)),
    ):
        if record[key] != wanted:
            say(
                f"its {key} are {shown(record[key], 100)}, but the run's command and scenarios make "
                f"{shown(wanted, 100)}"
            )
    if record["max_schedules"] != request.max_schedules:
        say(f"max_schedules is {shown(record['max_schedules'])}, but its command gives {request.max_schedules}")
    cells = [(str(c["variant"]), str(c["scenario"]), str(c["granularity"])) for c in record["cells"]]
    if exact:
        if record["variants"] != list(expected.variants):
            say(
                f"its variants are {shown(record['variants'], 100)}, but its scenarios declare "
                f"{shown(list(expected.variants), 100)}"
            )
        missing = [cell for cell in expected.cells if cell not in cells]
        extra = [cell for cell in cells if cell not in expected.cells]
        for cell in missing:
            say(f"missing the cell {cell_name(cell)}: its scenarios declare it")
        for cell in extra:
            say(f"has a cell {cell_name(cell)} its scenarios do not declare")
        if not missing and not extra and cells != list(expected.cells):
            say("its cells are not in the order the kill matrix explores them")
    else:
        for variant in expected.variants:
            if variant not in record["variants"]:
                say(f"does not list the variant {printable(variant)}, which a race scenario's normal run used")
        for cell in expected.cells:
            if cell not in cells:
                say(f"missing the cell {cell_name(cell)}")
    partial = record.get("partial", False)
    if expected.partial is not None and partial is not expected.partial:
        say(
            f"partial is {str(partial).lower()}, but its command explores "
            f"{'some' if expected.partial else 'every one'} of the race scenarios"
        )
