"""``lab run`` and ``lab explore``: run the scenarios (and explore them) into a new evidence folder.

Exit codes: 0 every check passed and the evidence verified; 1 a check failed, a scenario errored, an exploration
failed or was incomplete, a counterexample could not be saved, or ``--sign`` could not sign (the evidence is still
written); 2 a usage error, nothing written; 3 the evidence could not be written (one line, the folder left
unfinished); 130 interrupted.
"""

from __future__ import annotations

import argparse
import os
from typing import Any

from rich.markup import escape

from lab.campaign import DEFAULT_WATCHDOG, Campaign, ExploreSettings, RunOutcome
from lab.cli.common import Output, a_path, add_granularity, add_scenarios, add_watchdog
from lab.cli.progress import CampaignProgress
from lab.engine.search import DEFAULT_MAX_SCHEDULES, MODES, STRATEGIES
from lab.errors import LabError, UsageError
from lab.render import (
    Invocation,
    exploration_table,
    kill_matrix_table,
    outcome_rows_table,
    print_counterexample,
    print_failures,
    summary_table,
)
from lab.scenarios.exploring import ExploreVerdict
from lab.scenarios.runner import Verdict


def add(commands: Any) -> None:
    """Register ``run`` and ``explore``."""
    for name, text in (
        ("run", "run every scenario (or those named) into a new evidence folder"),
        ("explore", "run, then explore every interleaving of, the scenarios into a new evidence folder"),
    ):
        parser = commands.add_parser(name, help=text, description=text[0].upper() + text[1:] + ".")
        parser.add_argument("--out", type=a_path, metavar="DIR", required=True, help="the evidence folder to create")
        add_scenarios(parser)
        parser.add_argument(
            "--scenario", action="append", metavar="NAME", default=[], help="only this scenario (repeatable)"
        )
        add_watchdog(parser)
        parser.add_argument(
            "--sign",
            type=a_path,
            metavar="KEYFILE",
            help="sign SHA256SUMS with this OpenSSH private key (ssh-keygen -Y sign), as SHA256SUMS.sig",
        )
        if name == "explore":
            _add_explore_flags(parser)
        parser.set_defaults(handler=main)


def _add_explore_flags(parser: argparse.ArgumentParser) -> None:
    add_granularity(parser, both=True)
    parser.add_argument(
        "--preemptions", type=int, metavar="K", help="explore only schedules with at most K preemptions"
    )
    parser.add_argument(
        "--max-schedules",
        type=int,
        metavar="N",
        default=DEFAULT_MAX_SCHEDULES,
        help=f"schedule budget per exploration (default {DEFAULT_MAX_SCHEDULES})",
    )
    parser.add_argument(
        "--strategy",
        choices=STRATEGIES,
        default="dpor",
        help="how to search: dpor (the prover, the default), pct, random, ipb, idb, or a portfolio of them",
    )
    parser.add_argument(
        "--mode",
        choices=MODES,
        default="prove",
        help="prove: run the budget and count every outcome (default); find: stop at the first failure",
    )
    parser.add_argument("--seed", type=int, default=0, metavar="N", help="seed of the sampling strategies (0)")
    parser.add_argument(
        "--seconds", type=float, metavar="S", help="time budget per exploration (beside --max-schedules)"
    )
    parser.add_argument(
        "--variant",
        metavar="NAME",
        help="explore this session variant (of the scenarios that declare it) instead of each one's first, and "
        "skip the kill matrix",
    )
    parser.add_argument(
        "--save-scenario",
        metavar="NAME",
        help="save the first counterexample (of any variant, mutants of the kill matrix included) as NAME.py in "
        "the scenario folder, a pinned regression scenario",
    )
    parser.add_argument(
        "--jobs",
        type=int,
        metavar="N",
        default=os.cpu_count() or 1,
        help="processes exploring one scenario at once (default: this machine's cores); any number finds the same",
    )


def settings(args: argparse.Namespace) -> ExploreSettings:
    """The exploration settings the flags ask for, or a :class:`UsageError`."""
    if args.preemptions is not None and args.preemptions < 0:
        raise UsageError("--preemptions needs a number >= 0")
    if args.max_schedules < 1:
        raise UsageError("--max-schedules needs a number >= 1")
    if args.jobs < 1:
        raise UsageError("--jobs needs a number >= 1")
    if args.seed < 0:
        raise UsageError("--seed needs a number >= 0")
    if args.seconds is not None and not args.seconds > 0:
        raise UsageError("--seconds needs a number of seconds > 0")
    granularities = ("probe", "line") if args.granularity == "both" else (args.granularity or "probe",)
    return ExploreSettings(
        granularities,
        args.preemptions,
        args.max_schedules,
        args.variant,
        args.jobs,
        strategy=args.strategy,
        mode=args.mode,
        seed=args.seed,
        seconds=args.seconds,
    )


def main(args: argparse.Namespace, output: Output) -> int:
    """Run (and explore), print the summaries, and return the exit code."""
    campaign = Campaign(args.scenarios, root=args.root)
    explore = settings(args) if args.command == "explore" else None
    save = getattr(args, "save_scenario", None)
    if save:
        campaign.check_new_name(save)
    with CampaignProgress(output) as progress:
        outcome = campaign.run(
            args.out,
            names=args.scenario,
            command=args.recorded,
            watchdog=args.watchdog if args.watchdog is not None else DEFAULT_WATCHDOG,
            explore=explore,
            sign=args.sign,
            listener=progress,
            created=lambda folder: setattr(args, "created", folder),
        )
    _print(outcome, output, Invocation.of(output.prog, args.scenarios))
    audit = outcome.audit
    checks = "all checks passed" if outcome.status == Verdict.PASS else "SOME CHECKS FAILED"
    unproved = [found for found in outcome.explorations if found.verdict is not ExploreVerdict.PASS]
    if unproved:  # an exploration's own verdict, never hidden behind the run's (a mutant's FAIL is its bug found)
        named = ", ".join(
            f"{found.name} ({found.granularity}{', ' + found.variant if found.variant else ''}) {found.verdict}"
            for found in unproved
        )
        checks = f"exploration {named}; scenario checks {'passed' if outcome.status == Verdict.PASS else 'FAILED'}"
    output.line(
        f"evidence written to {args.out} ({checks}"
        f"; self-audit {'ok' if audit is not None and audit.ok else 'FOUND PROBLEMS'}"
        f"{'; signed: SHA256SUMS.sig' if args.sign else ''})"
    )
    saved = _save(campaign, outcome, save, output) if save else True
    return 0 if outcome.passed and saved else 1


def _print(outcome: RunOutcome, output: Output, invocation: Invocation) -> None:
    console = output.out
    for broken in outcome.broken:
        console.print(f"[red]broken scenario[/] {escape(str(broken))}", highlight=False)
    console.print(summary_table(outcome.results))
    print_failures(console, outcome.results)
    if not outcome.explored:
        return
    if outcome.explorations:
        console.print(exploration_table(outcome.explorations))
    for found in outcome.explorations:
        if found.verdict is not ExploreVerdict.PASS or len(found.rows) > 1:
            console.print(outcome_rows_table(found))
        print_counterexample(console, found, invocation)
    matrix = outcome.kill_matrix
    if matrix is not None:
        console.print(kill_matrix_table(matrix))
        for problem in matrix.problems():
            console.print(f"[red]kill matrix:[/] {escape(str(problem))}", highlight=False)
        for note in matrix.notes():
            output.line(f"kill matrix: {note}")


def _save(campaign: Campaign, outcome: RunOutcome, name: str, output: Output) -> bool:
    """``--save-scenario``: False, with one line on standard error, when the counterexample cannot be saved."""
    try:
        saved = campaign.save(outcome, name)
    except LabError as error:
        output.fail(f"--save-scenario {name}: {error}")
        return False
    if saved is None:
        output.line(f"no counterexample to save: every exploration passed; {name}.py was not written")
        return True
    found, path = saved
    over = f" over {found.variant}" if found.variant else ""
    output.line(
        f"saved the counterexample of {found.name}{over} ({found.granularity}) as {path}; "
        f"it replays with: lab run --scenarios {path.parent} --scenario {name} --out evidence/try-{name}"
    )
    return True
