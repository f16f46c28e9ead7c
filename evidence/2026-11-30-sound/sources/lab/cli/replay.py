"""``lab replay NAME:SCHEDULE``: re-run exactly one recorded interleaving and print it, a column per actor.

Exit codes: 0 the schedule replayed to its end; 1 it diverged (the scenario no longer follows it); 2 a usage error.
"""

from __future__ import annotations

import argparse
from typing import Any

from rich.markup import escape

from lab.campaign import Campaign, check_watchdog
from lab.cli.common import Output, add_granularity, add_scenarios, add_watchdog
from lab.render import replay_table


def add(commands: Any) -> None:
    """Register ``replay``."""
    parser = commands.add_parser(
        "replay",
        help="re-run one recorded interleaving and show it, a column per actor",
        description="Re-run exactly one recorded interleaving (a counterexample's replay command prints one).",
    )
    parser.add_argument(
        "spec", metavar="NAME:SCHEDULE", help="the scenario and its schedule, e.g. out_of_order_commit:0:01-1:01"
    )
    add_scenarios(parser)
    add_granularity(parser, both=False)
    parser.add_argument("--variant", metavar="NAME", help="the session variant the schedule was recorded over")
    add_watchdog(parser)
    parser.set_defaults(handler=main)


def main(args: argparse.Namespace, output: Output) -> int:
    """Replay, print the table and the outcome; 1 when the replay diverged."""
    if args.watchdog is not None:
        check_watchdog(args.watchdog)
    campaign = Campaign(args.scenarios, root=args.root)
    replayed = campaign.replay(args.spec, granularity=args.granularity, variant=args.variant, watchdog=args.watchdog)
    output.out.print(replay_table(replayed.result, replayed.actors))
    if replayed.diverged:
        output.out.print(f"[red]replay diverged[/]: {escape(str(replayed.result.problem))}", highlight=False)
        return 1
    output.line(f"outcome: {', '.join(f'{k}={v}' for k, v in replayed.result.observed.items())}")
    return 0
