"""``lab list`` and ``lab new NAME``: the scenarios of a folder with their lessons; a new one from the template."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from lab.campaign import Campaign
from lab.cli.common import Output, add_scenarios
from lab.render import Invocation, list_table


def add(commands: Any) -> None:
    """Register ``list`` and ``new``."""
    listing = commands.add_parser(
        "list", help="list the scenarios and their lessons", description="List the scenarios and their lessons."
    )
    add_scenarios(listing)
    listing.set_defaults(handler=list_main)
    new = commands.add_parser(
        "new",
        help="write a new scenario file from the commented template",
        description="Write NAME.py in the scenario folder from the commented template (never overwrites).",
    )
    new.add_argument("name", metavar="NAME", help="the new scenario's name, lower_snake_case")
    add_scenarios(new)
    new.set_defaults(handler=new_main)


def list_main(args: argparse.Namespace, output: Output) -> int:
    """Print every scenario with its lesson (a broken file with its one-line problem)."""
    output.out.print(list_table(Campaign(args.scenarios, root=args.root).items()))
    return 0


def new_main(args: argparse.Namespace, output: Output) -> int:
    """Write the file and say how to run it."""
    campaign = Campaign(args.scenarios, root=args.root, for_new=True)
    path = campaign.new(args.name)
    out = f"evidence/try-{args.name}" if Path("evidence").is_dir() else f"try-{args.name}"
    command = Invocation.of(output.prog, args.scenarios).run(args.name, out)
    output.line(f"wrote {path}; run it with: {command}")
    return 0
