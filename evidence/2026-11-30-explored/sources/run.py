"""Run the lab's scenarios into a new evidence folder; explore their interleavings; replay one.

    python run.py --out evidence/my-run [--scenario NAME ...]      run, print a summary, write the evidence
    python run.py --explore --out DIR [--granularity probe|line|instruction|both] [--preemptions K] [--max-schedules N]
                  [--variant V] [--save-scenario NAME]
    python run.py --replay NAME:SCHEDULE [--granularity G] [--variant V]
    python run.py --list                                           list scenarios and their lessons
    python run.py --new NAME                                       write a new scenario file from the template

A flag that the chosen action would ignore (``--variant`` on a plain run, ``--scenario`` with ``--replay``) is a
usage error rather than a silent no-op.

Exit codes: 0 every check passed; 1 a check failed, a scenario errored, an exploration failed or was incomplete,
a replay diverged, a counterexample could not be saved, or --sign could not sign (the evidence is still written);
2 a usage error, with
nothing written; 3 the evidence could not be written (a full disk): one line, the folder left unfinished;
130 interrupted (Ctrl-C): one line, the folder (if it was made) left unfinished.
"""

from __future__ import annotations

import argparse
import math
import sys
from datetime import UTC, datetime
from pathlib import Path

from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TaskID, TextColumn, TimeElapsedColumn

from lab.engine.explorer import DEFAULT_MAX_SCHEDULES, Exploration
from lab.errors import LabError, ScenarioError, UsageError
from lab.evidence.isolation import Job, run_files
from lab.evidence.signing import SigningError, check_signing_key
from lab.evidence.writer import WriteError, create_evidence_folder, write_evidence
from lab.render import (
    exploration_table,
    kill_matrix_table,
    list_table,
    outcome_rows_table,
    print_counterexample,
    print_failures,
    replay_table,
    summary_table,
)
from lab.scenarios.exploring import ExploreVerdict, ScenarioExploration, explore_scenario, replay_scenario
from lab.scenarios.kill_matrix import KillMatrix, build_kill_matrix, race_scenario
from lab.scenarios.loader import BrokenScenario, LoadedScenario, discover, load_all
from lab.scenarios.pinning import describe_pin, is_pinned, save_counterexample
from lab.scenarios.runner import ScenarioResult
from lab.scenarios.template import check_new_name, write_template

ROOT = Path(__file__).resolve().parent
SCENARIOS = ROOT / "scenarios"
DEFAULT_WATCHDOG = 10.0
WATCHDOG_RANGE = (0.01, 3600.0)
"""The seconds ``--watchdog`` accepts: ``nan`` and ``inf`` would never report a blocked actor, and below a
hundredth of a second ordinary scheduling looks like a hang."""


class _Parser(argparse.ArgumentParser):
    """argparse, but a usage error is one line and exit code 2."""

    def error(self, message: str) -> None:  # type: ignore[override]
        raise UsageError(message)


def _parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="run.py", description="Run the lab's scenarios into a new evidence folder.")
    action = parser.add_mutually_exclusive_group(required=True)
    action.add_argument("--out", type=Path, metavar="DIR", help="the evidence folder to create (must not exist)")
    action.add_argument("--replay", metavar="NAME:SCHEDULE", help="re-run exactly one recorded interleaving")
    action.add_argument("--list", action="store_true", help="list the scenarios and their lessons")
    action.add_argument("--new", metavar="NAME", help="write scenarios/NAME.py from the commented template")
    parser.add_argument(
        "--scenario", action="append", metavar="NAME", default=[], help="run only this scenario (repeatable)"
    )
    parser.add_argument(
        "--watchdog",
        type=float,
        metavar="SECONDS",
        help="how long an actor may block outside the lab before it is reported, "
        f"{WATCHDOG_RANGE[0]:g} to {WATCHDOG_RANGE[1]:g} (default {DEFAULT_WATCHDOG:g})",
    )
    parser.add_argument("--explore", action="store_true", help="with --out: also explore every interleaving")
    parser.add_argument(
        "--granularity",
        choices=("probe", "line", "instruction", "both"),
        help="with --explore or --replay: scheduling points are the lab's primitives and probes, "
        "every line, or every access to shared state (default probe; both = probe and line)",
    )
    parser.add_argument(
        "--preemptions", type=int, metavar="K", help="with --explore: explore only schedules with at most K preemptions"
    )
    parser.add_argument(
        "--sign",
        type=Path,
        metavar="KEYFILE",
        help="with --out: sign SHA256SUMS with this OpenSSH private key (ssh-keygen -Y sign), as SHA256SUMS.sig",
    )
    parser.add_argument(
        "--max-schedules",
        type=int,
        metavar="N",
        help=f"with --explore: schedule budget per exploration (default {DEFAULT_MAX_SCHEDULES})",
    )
    parser.add_argument(
        "--variant",
        metavar="NAME",
        help="with --explore: explore this session variant (of the scenarios that declare it) "
        "instead of each one's first, and skip the kill matrix; with --replay: the variant "
        "the schedule was recorded over",
    )
    parser.add_argument(
        "--save-scenario",
        metavar="NAME",
        help="with --explore: save the first counterexample (of any variant, mutants of the kill "
        "matrix included) as scenarios/NAME.py, a pinned regression scenario",
    )
    return parser


def main(argv: list[str] | None = None, *, console: Console | None = None) -> int:
    """Parse ``argv``, act, and return the exit code."""
    console = console or Console()
    args_list = sys.argv[1:] if argv is None else argv
    args_holder: dict[str, argparse.Namespace] = {}  # what Ctrl-C needs to know: which folder was already made
    try:
        args = args_holder["args"] = _parser().parse_args(args_list)
        _check_combinations(args)
        _fill_defaults(args)
        if args.list:
            console.print(list_table(load_all(SCENARIOS)))
            return 0
        if args.new:
            path = write_template(SCENARIOS, args.new)
            console.print(
                f"wrote {_shown(path)}; run it with: python run.py --out evidence/try-{args.new} --scenario {args.new}",
                markup=False,
                highlight=False,
            )
            return 0
        if args.replay:
            return _replay(args.replay, args.granularity, args.variant, args.watchdog, console)
        return _run(args, ["run.py", *args_list], console)
    except SigningError as error:
        print(f"run.py: --sign: {error}; the evidence is written and verifiable, but not signed", file=sys.stderr)
        return 1
    except WriteError as error:
        print(f"run.py: {error}; the folder is left unfinished (no SHA256SUMS), and audit.py says so", file=sys.stderr)
        return 3
    except LabError as error:
        print(f"run.py: {error}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        folder = getattr(args_holder.get("args"), "created", None)
        left = (
            f"; {folder} is left unfinished (no SHA256SUMS), and audit.py says so"
            if folder is not None
            else "; nothing was written"
        )
        print(f"run.py: interrupted{left}", file=sys.stderr)
        return 130


def _check_combinations(args: argparse.Namespace) -> None:
    """Refuse, in one line, a flag the chosen action would ignore or cannot use: nothing has been written yet."""
    explore, replay = args.explore, args.replay is not None
    low, high = WATCHDOG_RANGE
    if args.watchdog is not None and not (math.isfinite(args.watchdog) and low <= args.watchdog <= high):
        raise UsageError(f"--watchdog needs a number of seconds from {low:g} to {high:g}, not {args.watchdog:g}")
    if args.sign is not None:
        if not args.out:
            raise UsageError("--sign goes with --out")
        check_signing_key(args.sign)
    if args.save_scenario and not args.explore:
        raise UsageError("--save-scenario goes with --explore")
    if args.explore and not args.out:
        raise UsageError("--explore needs --out DIR")
    if args.watchdog is not None and not (args.out or replay):
        raise UsageError("--watchdog goes with --out or --replay")
    if args.scenario and not args.out:
        raise UsageError(
            "--scenario goes with --out" + (" (--replay names its scenario in NAME:SCHEDULE)" if replay else "")
        )
    for flag, value in (("--preemptions", args.preemptions), ("--max-schedules", args.max_schedules)):
        if value is not None and not explore:
            raise UsageError(f"{flag} goes with --explore")
    for flag, value in (("--granularity", args.granularity), ("--variant", args.variant)):
        if value is not None and not (explore or replay):
            raise UsageError(
                f"{flag} goes with --explore or --replay; a normal run uses each scenario's own "
                "session and the probe granularity"
            )
    if args.preemptions is not None and args.preemptions < 0:
        raise UsageError("--preemptions needs a number >= 0")
    if args.max_schedules is not None and args.max_schedules < 1:
        raise UsageError("--max-schedules needs a number >= 1")
    if replay and args.granularity == "both":
        raise UsageError("--replay takes one granularity: probe, line or instruction")
    if args.save_scenario:
        check_new_name(args.save_scenario)
        if (SCENARIOS / f"{args.save_scenario}.py").exists():
            raise UsageError(
                f"--save-scenario {args.save_scenario}: {_shown(SCENARIOS / args.save_scenario)}.py "
                "already exists; choose another name (nothing was written)"
            )


def _fill_defaults(args: argparse.Namespace) -> None:
    """The defaults of the flags whose absence :func:`_check_combinations` has to see."""
    args.watchdog = DEFAULT_WATCHDOG if args.watchdog is None else args.watchdog
    args.max_schedules = DEFAULT_MAX_SCHEDULES if args.max_schedules is None else args.max_schedules


def _run(args: argparse.Namespace, command: list[str], console: Console) -> int:
    """Run each selected scenario file in a worker process of its own (:mod:`lab.evidence.isolation`), explore if
    asked, and write the evidence. Only exploration, which runs in this process, imports scenario files here: a
    plain run never does, so nothing one file does at import reaches the others or the evidence writer."""
    paths = _select_paths(discover(SCENARIOS), args.scenario)
    loaded: list[LoadedScenario] = []
    to_explore: list[LoadedScenario] = []
    if args.explore:
        every = load_all(SCENARIOS)
        args.all_races = {item.name for item in every if isinstance(item, LoadedScenario) and race_scenario(item)}
        loaded = [item for item in _select(every, args.scenario) if isinstance(item, LoadedScenario)]
        to_explore = _to_explore(loaded, args)
    started = datetime.now(UTC)
    folder = args.created = create_evidence_folder(args.out, started=started)
    results: list[ScenarioResult] = []
    broken: list[BrokenScenario] = []
    for outcome in run_files([Job(path, args.watchdog) for path in paths]):
        if isinstance(outcome, BrokenScenario):
            broken.append(outcome)
            console.print(f"[red]broken scenario[/] {escape(str(outcome))}", highlight=False)
        else:
            results.append(outcome)
    console.print(summary_table(results))
    print_failures(console, results)
    explorations: list[ScenarioExploration] = []
    matrix: KillMatrix | None = None
    settings = None
    failures: list[ScenarioExploration] = []
    if args.explore:
        granularities = ["probe", "line"] if args.granularity == "both" else [args.granularity or "probe"]
        settings = {
            "granularities": granularities,
            "preemption_bound": args.preemptions,
            "max_schedules": args.max_schedules,
        }
        explorations, matrix, failures = _explore(loaded, to_explore, granularities, args, console)
    audit = write_evidence(
        folder,
        results,
        broken,
        root=ROOT,
        command=command,
        started=started,
        ended=datetime.now(UTC),
        explorations=explorations,
        kill_matrix=matrix,
        explore_settings=settings,
        sign_with=args.sign,
    )
    ok = not broken and all(result.passed for result in results) and _explored_ok(explorations, results, matrix)
    console.print(
        f"evidence written to {args.out} ({'all checks passed' if ok else 'SOME CHECKS FAILED'}; "
        f"self-audit {'ok' if audit.ok else 'FOUND PROBLEMS'}{'; signed: SHA256SUMS.sig' if args.sign else ''})",
        markup=False,
        highlight=False,
    )
    saved = True
    if args.save_scenario:
        saved = _save(failures, loaded, args.save_scenario, console)
    return 0 if ok and audit.ok and saved else 1


def _to_explore(loaded: list[LoadedScenario], args: argparse.Namespace) -> list[LoadedScenario]:
    """The scenarios ``--explore`` explores, checked before anything is written.

    A pinned counterexample is never explored (it is one interleaving, which its normal run replays). With
    ``--variant V`` only scenarios that declare V are explored: a scenario named with ``--scenario`` that does
    not is a usage error; without ``--scenario``, the others are skipped, and one line says which were kept.
    """
    explorable = [item for item in loaded if not is_pinned(item.cls)]
    variant = args.variant
    if variant is None:
        return explorable
    if loaded and not explorable:
        raise UsageError(
            f"--variant {variant}: every selected scenario is pinned to one schedule, and pinned "
            "scenarios are not explored"
        )
    declaring = [item for item in explorable if variant in item.cls.variants]
    if args.scenario:
        lacking = next((item for item in explorable if item not in declaring), None)
        if lacking is not None:
            known = ", ".join(lacking.cls.variants) or "none: it is not a race scenario"
            raise UsageError(
                f"--variant {variant}: scenario {lacking.name} does not declare it (its variants: {known})"
            )
    if not declaring:
        declared = sorted({name for item in explorable for name in item.cls.variants})
        raise UsageError(
            f"--variant {variant}: no selected scenario declares it (declared variants: "
            f"{', '.join(declared) or 'none'})"
        )
    return declaring


def _explore(
    loaded: list[LoadedScenario],
    to_explore: list[LoadedScenario],
    granularities: list[str],
    args: argparse.Namespace,
    console: Console,
) -> tuple[list[ScenarioExploration], KillMatrix | None, list[ScenarioExploration]]:
    """Explore, build the kill matrix, print both; also return every failed exploration, in the order found."""
    explorations: list[ScenarioExploration] = []
    failures: list[ScenarioExploration] = []
    for item in loaded:
        if is_pinned(item.cls):
            console.print(
                f"not explored: {item.name} is pinned to {describe_pin(item.cls)}; its normal run above replayed it",
                markup=False,
                highlight=False,
            )
    if args.variant is not None and len(to_explore) < len([i for i in loaded if not is_pinned(i.cls)]):
        console.print(
            f"--variant {args.variant}: exploring only the scenarios that declare it: "
            f"{', '.join(item.name for item in to_explore)}",
            markup=False,
            highlight=False,
        )
    with _progress(console) as progress:
        for item in to_explore:
            for granularity in granularities:
                task = progress.add_task(f"{item.name} ({granularity})", total=None, outcomes=0, rate="")

                def tick(found: Exploration, task: TaskID = task) -> None:
                    done = found.schedules + found.pruned
                    elapsed = progress.tasks[task].elapsed or 0.0
                    rate = f"{done / elapsed:,.0f}/s" if elapsed > 0 else ""
                    progress.update(task, completed=done, outcomes=len(found.counts), rate=rate)

                try:
                    found = explore_scenario(
                        item,
                        granularity=granularity,
                        variant=args.variant,
                        preemption_bound=args.preemptions,
                        max_schedules=args.max_schedules,
                        progress=tick,
                    )
                except ScenarioError as error:  # its setup raises: the normal run already reports it as ERROR
                    console.print(f"[red]not explored[/] {escape(str(error))}", highlight=False)
                    break
                explorations.append(found)
                progress.update(task, total=found.schedules + found.pruned)
        races = [item for item in to_explore if race_scenario(item)]
        matrix = None
        if races and args.variant is None:
            task = progress.add_task(
                "kill matrix", total=sum(len(r.cls.variants) * 2 for r in races), outcomes=0, rate=""
            )

            def cell_done(found: ScenarioExploration) -> None:
                progress.advance(task)
                if found.counterexample is not None:
                    failures.append(found)

            partial = {race.name for race in races} != args.all_races
            matrix = build_kill_matrix(races, max_schedules=args.max_schedules, on_cell=cell_done, partial=partial)
    failures[:0] = [found for found in explorations if found.counterexample is not None]
    console.print(exploration_table(explorations))
    for found in explorations:
        if found.verdict is not ExploreVerdict.PASS or len(found.rows) > 1:
            console.print(outcome_rows_table(found))
        print_counterexample(console, found)
    if matrix is not None:
        console.print(kill_matrix_table(matrix))
        for problem in matrix.problems():
            console.print(f"[red]kill matrix:[/] {escape(str(problem))}", highlight=False)
        for note in matrix.notes():
            console.print(f"kill matrix: {note}", markup=False, highlight=False)
    elif races:
        console.print(
            f"kill matrix: not built: --variant {args.variant} explores one variant", markup=False, highlight=False
        )
    return explorations, matrix, failures


def _progress(console: Console) -> Progress:
    return Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("schedules, {task.fields[outcomes]} outcomes {task.fields[rate]}"),
        TimeElapsedColumn(),
        console=console,
        transient=True,
    )


def _save(failures: list[ScenarioExploration], loaded: list[LoadedScenario], name: str, console: Console) -> bool:
    """Save the first counterexample found (explorations first, then the kill matrix's cells) as a pinned scenario.

    Runs after the evidence is written, so the folder holds what ran and nothing else. Returns False, with one
    line on stderr, when the counterexample cannot be saved; nothing to save is not a mistake.
    """
    found = next((f for f in failures if f.counterexample is not None), None)
    if found is None or found.counterexample is None:
        console.print(
            f"no counterexample to save: every exploration passed; {name}.py was not written",
            markup=False,
            highlight=False,
        )
        return True
    item = next(item for item in loaded if item.name == found.name)
    replayed = replay_scenario(
        item, found.counterexample.schedule, granularity=found.granularity, variant=found.variant or None
    )
    try:
        path = save_counterexample(SCENARIOS, name, found, replayed, item.cls.actors)
    except LabError as error:
        print(f"run.py: --save-scenario {name}: {error}", file=sys.stderr)
        return False
    over = f" over {found.variant}" if found.variant else ""
    console.print(
        f"saved the counterexample of {found.name}{over} ({found.granularity}) as {_shown(path)}; "
        f"it replays with: python run.py --out evidence/try-{name} --scenario {name}",
        markup=False,
        highlight=False,
    )
    return True


def _explored_ok(
    explorations: list[ScenarioExploration], results: list[ScenarioResult], matrix: KillMatrix | None
) -> bool:
    """As ``run.json`` judges it: explorations of the variant each scenario's normal run used must pass; another
    variant (``--variant`` over a mutant) may fail, that is its lesson; the kill matrix must have no problems."""
    defaults = {result.name: result.variant for result in results}
    counted = [found for found in explorations if found.variant == defaults.get(found.name, found.variant)]
    return all(f.verdict is ExploreVerdict.PASS for f in counted) and (matrix is None or not matrix.problems())


def _replay(spec: str, granularity: str | None, variant: str | None, watchdog: float, console: Console) -> int:
    name, sep, schedule = spec.partition(":")
    if not sep:
        raise UsageError("--replay takes NAME:SCHEDULE, for example out_of_order_commit:0:01-1:01")
    item = _select(load_all(SCENARIOS), [name])[0]
    if isinstance(item, BrokenScenario):
        raise UsageError(f"scenario {item}")
    if is_pinned(item.cls):  # its schedule was recorded over its own variant and granularity
        variant = variant or item.cls.variant_name or None
        granularity = granularity or item.cls.granularity
    result = replay_scenario(
        item,
        schedule,
        granularity=granularity or "probe",
        variant=variant,
        watchdog_seconds=watchdog,
        watch_states=True,
    )
    console.print(replay_table(result, item.cls.actors))
    if result.run_status == "DIVERGED":
        console.print(f"[red]replay diverged[/]: {escape(str(result.problem))}", highlight=False)
        return 1
    console.print(
        f"outcome: {', '.join(f'{k}={v}' for k, v in result.observed.items())}", markup=False, highlight=False
    )
    return 0


def _shown(path: Path) -> str:
    """``path`` relative to the checkout when it is inside it (as the user typed it), else in full."""
    try:
        return str(path.relative_to(ROOT))
    except ValueError:
        return str(path)


def _select_paths(paths: list[Path], names: list[str]) -> list[Path]:
    """The scenario files named (by stem, in the order given, once each), or all of them."""
    if not names:
        return paths
    known = {path.stem: path for path in paths}
    unknown = [name for name in names if name not in known]
    if unknown:
        raise UsageError(f"unknown scenario {unknown[0]!r}; see python run.py --list")
    return [known[name] for name in dict.fromkeys(names)]


def _select(items: list[LoadedScenario | BrokenScenario], names: list[str]) -> list[LoadedScenario | BrokenScenario]:
    if not names:
        return items
    known = {item.name: item for item in items}
    unknown = [name for name in names if name not in known]
    if unknown:
        raise UsageError(f"unknown scenario {unknown[0]!r}; see python run.py --list")
    return [known[name] for name in dict.fromkeys(names)]


if __name__ == "__main__":
    sys.exit(main())
