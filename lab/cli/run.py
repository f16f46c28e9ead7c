"""``lab run`` and ``lab explore``: run the scenarios (and explore them) into a new evidence folder.

Exit codes: 0 every check passed and the evidence verified; 1 a check failed, a scenario errored, an exploration
failed or was incomplete, a counterexample could not be saved, or ``--sign`` could not sign (the evidence is still
written); 2 a usage error, nothing written; 3 the evidence could not be written (one line, the folder left
unfinished); 130 interrupted.
"""

from __future__ import annotations

import argparse
from typing import Any

from rich.markup import escape

from lab.campaign import Campaign, ExploreSettings, RunOutcome
from lab.cli.common import Output
from lab.cli.progress import CampaignProgress
from lab.commandline import RUN_HELP, RunRequest, add_run_flags, run_request
from lab.errors import LabError
from lab.render import (
    Invocation,
    exploration_table,
    kill_matrix_table,
    outcome_rows_table,
    print_counterexample,
    print_failures,
    summary_table,
)
from lab.scenarios.cross_check import CheckedExploration
from lab.scenarios.exploring import ExploreVerdict
from lab.scenarios.runner import Verdict


def add(commands: Any) -> None:
    """Register ``run`` and ``explore``, with the flags of the one grammar (:mod:`lab.commandline`), which the
    auditor reads a recorded command with too."""
    for name, text in RUN_HELP.items():
        parser = commands.add_parser(name, help=text, description=text[0].upper() + text[1:] + ".")
        add_run_flags(parser, explore=name == "explore")
        parser.set_defaults(handler=main)


def settings(request: RunRequest) -> ExploreSettings | None:
    """The exploration settings a request asks for (``None``: it does not explore)."""
    if not request.explore:
        return None
    return ExploreSettings(
        request.granularities,
        request.preemptions,
        request.max_schedules,
        request.variant,
        request.jobs,
        strategy=request.strategy,
        mode=request.mode,
        seed=request.seed,
        seconds=request.seconds,
        cross_check=request.cross_check,
    )


def main(args: argparse.Namespace, output: Output) -> int:
    """Run (and explore), print the summaries, and return the exit code."""
    request = run_request(args, explore=args.command == "explore")
    campaign = Campaign(args.scenarios, root=args.root)
    explore = settings(request)
    save = request.save_scenario
    if save:
        campaign.check_new_name(save)
    with CampaignProgress(output) as progress:
        outcome = campaign.run(
            args.out,
            names=request.names,
            command=args.recorded,
            watchdog=request.watchdog,
            explore=explore,
            sign=args.sign,
            listener=progress,
            created=lambda folder: setattr(args, "created", folder),
            resume=request.resume,
        )
    _print(outcome, output, Invocation.of(output.prog, args.scenarios))
    audit = outcome.audit
    checks = "all checks passed" if outcome.status == Verdict.PASS else "SOME CHECKS FAILED"
    unproved = [found for found in outcome.explorations if found.verdict is not ExploreVerdict.PASS]
    if unproved:  # an exploration's own verdict, never hidden behind the run's (a mutant's FAIL is its bug found)
        named = ", ".join(
            f"{found.name} ({found.granularity}{', ' + found.variant if found.variant else ''}) {found.verdict}"
            + (" (MODEL GAP)" if isinstance(found, CheckedExploration) and found.gap_lines else "")
            for found in unproved
        )
        checks = f"exploration {named}; scenario checks {'passed' if outcome.status == Verdict.PASS else 'FAILED'}"
    output.line(
        f"evidence written to {args.out} ({checks}"
        f"; self-audit {'ok' if audit is not None and audit.ok else 'FOUND PROBLEMS'}"
        f"{'; signed: SHA256SUMS.sig' if args.sign else ''})"
    )
    saved = _save(campaign, outcome, save, output) if save else True
    output.raise_unwritten()  # the evidence is finished: now the output's failure, if any, is the command's
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
        if isinstance(found, CheckedExploration) and found.gap_lines:  # what real threads reached, again, at the end
            for line in found.lines():
                output.line(line)
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
        gap = any(isinstance(found, CheckedExploration) and found.gap_lines for found in outcome.explorations)
        why = "no explored schedule failed (a MODEL GAP is no schedule)" if gap else "every exploration passed"
        output.line(f"no counterexample to save: {why}; {name}.py was not written")
        return True
    found, path = saved
    over = f" over {found.variant}" if found.variant else ""
    output.line(
        f"saved the counterexample of {found.name}{over} ({found.granularity}) as {path}; "
        f"it replays with: lab run --scenarios {path.parent} --scenario {name} --out evidence/try-{name}"
    )
    return True
