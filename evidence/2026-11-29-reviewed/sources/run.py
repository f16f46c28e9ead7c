"""Run the lab's scenarios into a new evidence folder; explore their interleavings; replay one.

    python run.py --out evidence/my-run [--scenario NAME ...]      run, print a summary, write the evidence
    python run.py --explore --out DIR [--granularity probe|line|both] [--preemptions K] [--save-scenario NAME]
    python run.py --replay NAME:SCHEDULE [--granularity G] [--variant V]
    python run.py --list                                           list scenarios and their lessons
    python run.py --new NAME                                       write a new scenario file from the template

Exit codes: 0 every check passed; 1 a check failed, a scenario errored, an exploration failed or was incomplete,
or a replay diverged (the evidence is still written); 2 a usage error, with nothing written.
"""

from __future__ import annotations

import argparse
import sys
from datetime import UTC, datetime
from pathlib import Path

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TaskID, TextColumn, TimeElapsedColumn

from lab.engine.explorer import DEFAULT_MAX_SCHEDULES, Exploration
from lab.errors import LabError, ScenarioError, UsageError
from lab.evidence.writer import create_evidence_folder, write_evidence
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
from lab.scenarios.kill_matrix import KillMatrix, build_kill_matrix
from lab.scenarios.loader import BrokenScenario, LoadedScenario, load_all
from lab.scenarios.pinning import save_counterexample
from lab.scenarios.runner import ScenarioResult, run_scenario
from lab.scenarios.template import write_template

ROOT = Path(__file__).resolve().parent
SCENARIOS = ROOT / "scenarios"


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
    parser.add_argument("--scenario", action="append", metavar="NAME", default=[],
                        help="run only this scenario (repeatable)")
    parser.add_argument("--watchdog", type=float, default=10.0, metavar="SECONDS",
                        help="how long an actor may block outside the lab before it is reported (default 10)")
    parser.add_argument("--explore", action="store_true", help="with --out: also explore every interleaving")
    parser.add_argument("--granularity", choices=("probe", "line", "both"), default="probe",
                        help="scheduling points: the lab's primitives and probes, or every line (default probe)")
    parser.add_argument("--preemptions", type=int, metavar="K",
                        help="explore only schedules with at most K preemptions")
    parser.add_argument("--max-schedules", type=int, default=DEFAULT_MAX_SCHEDULES, metavar="N",
                        help=f"schedule budget per exploration (default {DEFAULT_MAX_SCHEDULES})")
    parser.add_argument("--variant", metavar="NAME", help="with --replay: the session variant of a race scenario")
    parser.add_argument("--save-scenario", metavar="NAME",
                        help="with --explore: save the first counterexample as scenarios/NAME.py")
    return parser


def main(argv: list[str] | None = None, *, console: Console | None = None) -> int:
    """Parse ``argv``, act, and return the exit code."""
    console = console or Console()
    args_list = sys.argv[1:] if argv is None else argv
    try:
        args = _parser().parse_args(args_list)
        _check_combinations(args)
        if args.list:
            console.print(list_table(load_all(SCENARIOS)))
            return 0
        if args.new:
            path = write_template(SCENARIOS, args.new)
            console.print(f"wrote {path.relative_to(ROOT)}; run it with: python run.py --out evidence/try-{args.new} "
                          f"--scenario {args.new}", markup=False, highlight=False)
            return 0
        if args.replay:
            return _replay(args.replay, args.granularity, args.variant, args.watchdog, console)
        return _run(args, ["run.py", *args_list], console)
    except LabError as error:
        print(f"run.py: {error}", file=sys.stderr)
        return 2


def _check_combinations(args: argparse.Namespace) -> None:
    if args.watchdog <= 0:
        raise UsageError("--watchdog needs a positive number of seconds")
    if args.save_scenario and not args.explore:
        raise UsageError("--save-scenario goes with --explore")
    if args.explore and not args.out:
        raise UsageError("--explore needs --out DIR")
    if args.preemptions is not None and args.preemptions < 0:
        raise UsageError("--preemptions needs a number >= 0")
    if args.max_schedules < 1:
        raise UsageError("--max-schedules needs a number >= 1")
    if args.replay and args.granularity == "both":
        raise UsageError("--replay takes one granularity: probe or line")


def _run(args: argparse.Namespace, command: list[str], console: Console) -> int:
    items = _select(load_all(SCENARIOS), args.scenario)
    folder = create_evidence_folder(args.out)
    started = datetime.now(UTC)
    results: list[ScenarioResult] = []
    broken: list[BrokenScenario] = []
    for item in items:
        if isinstance(item, BrokenScenario):
            broken.append(item)
            console.print(f"[red]broken scenario[/] {item}", highlight=False)
        else:
            results.append(run_scenario(item, watchdog_seconds=args.watchdog))
    console.print(summary_table(results))
    print_failures(console, results)
    loaded = [item for item in items if isinstance(item, LoadedScenario)]
    explorations: list[ScenarioExploration] = []
    matrix: KillMatrix | None = None
    settings = None
    if args.explore:
        granularities = ["probe", "line"] if args.granularity == "both" else [args.granularity]
        settings = {"granularities": granularities, "preemption_bound": args.preemptions,
                    "max_schedules": args.max_schedules}
        explorations, matrix = _explore(loaded, granularities, args, console)
    audit = write_evidence(folder, results, broken, root=ROOT, command=command, started=started,
                           ended=datetime.now(UTC), explorations=explorations, kill_matrix=matrix,
                           explore_settings=settings)
    ok = not broken and all(result.passed for result in results) and _explored_ok(explorations, matrix)
    console.print(f"evidence written to {args.out} ({'all checks passed' if ok else 'SOME CHECKS FAILED'}; "
                  f"self-audit {'ok' if audit.ok else 'FOUND PROBLEMS'})", markup=False, highlight=False)
    return 0 if ok and audit.ok else 1


def _explore(
    loaded: list[LoadedScenario], granularities: list[str], args: argparse.Namespace, console: Console
) -> tuple[list[ScenarioExploration], KillMatrix | None]:
    explorations: list[ScenarioExploration] = []
    with _progress(console) as progress:
        for item in loaded:
            if item.cls.schedule:
                continue  # a pinned counterexample replays one schedule by design: there is nothing to explore
            for granularity in granularities:
                task = progress.add_task(f"{item.name} ({granularity})", total=None, outcomes=0, rate="")

                def tick(found: Exploration, task: TaskID = task) -> None:
                    done = found.schedules + found.pruned
                    elapsed = progress.tasks[task].elapsed or 0.0
                    rate = f"{done / elapsed:,.0f}/s" if elapsed > 0 else ""
                    progress.update(task, completed=done, outcomes=len(found.counts), rate=rate)

                try:
                    found = explore_scenario(item, granularity=granularity, preemption_bound=args.preemptions,
                                             max_schedules=args.max_schedules, progress=tick)
                except ScenarioError as error:  # its setup raises: the normal run already reports it as ERROR
                    console.print(f"[red]not explored[/] {error}", highlight=False)
                    break
                explorations.append(found)
                progress.update(task, total=found.schedules + found.pruned)
        races = [item for item in loaded if item.cls.variants]
        matrix = None
        if races:
            task = progress.add_task("kill matrix", total=sum(len(r.cls.variants) * 2 for r in races), outcomes=0,
                                     rate="")
            matrix = build_kill_matrix(races, max_schedules=args.max_schedules,
                                       on_cell=lambda found: progress.advance(task))
    console.print(exploration_table(explorations))
    for found in explorations:
        if found.verdict is not ExploreVerdict.PASS or len(found.rows) > 1:
            console.print(outcome_rows_table(found))
        print_counterexample(console, found)
    if matrix is not None:
        console.print(kill_matrix_table(matrix))
        for problem in matrix.problems():
            console.print(f"[red]kill matrix:[/] {problem}", highlight=False)
    if args.save_scenario:
        _save(explorations, args.save_scenario, console)
    return explorations, matrix


def _progress(console: Console) -> Progress:
    return Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                    TextColumn("schedules, {task.fields[outcomes]} outcomes {task.fields[rate]}"), TimeElapsedColumn(),
                    console=console, transient=True)


def _save(explorations: list[ScenarioExploration], name: str, console: Console) -> None:
    found = next((f for f in explorations if f.counterexample is not None), None)
    if found is None or found.counterexample is None:
        console.print("no counterexample to save: every exploration passed", highlight=False)
        return
    item = _select(load_all(SCENARIOS), [found.name])[0]
    if not isinstance(item, LoadedScenario):
        return
    replayed = replay_scenario(item, found.counterexample.schedule, granularity=found.granularity,
                               variant=found.variant or None)
    path = save_counterexample(SCENARIOS, name, found, replayed, item.cls.actors)
    console.print(f"saved the counterexample of {found.name} as {path.relative_to(ROOT)}", markup=False,
                  highlight=False)


def _explored_ok(explorations: list[ScenarioExploration], matrix: KillMatrix | None) -> bool:
    return all(f.verdict is ExploreVerdict.PASS for f in explorations) and (matrix is None or not matrix.problems())


def _replay(spec: str, granularity: str, variant: str | None, watchdog: float, console: Console) -> int:
    name, sep, schedule = spec.partition(":")
    if not sep:
        raise UsageError("--replay takes NAME:SCHEDULE, for example out_of_order_commit:0:01-1:01")
    item = _select(load_all(SCENARIOS), [name])[0]
    if isinstance(item, BrokenScenario):
        raise UsageError(f"scenario {item}")
    result = replay_scenario(item, schedule, granularity=granularity, variant=variant, watchdog_seconds=watchdog,
                             watch_states=True)
    console.print(replay_table(result, item.cls.actors))
    if result.run_status == "DIVERGED":
        console.print(f"[red]replay diverged[/]: {result.problem}", highlight=False)
        return 1
    console.print(f"outcome: {', '.join(f'{k}={v}' for k, v in result.observed.items())}", markup=False,
                  highlight=False)
    return 0


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
