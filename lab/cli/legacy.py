"""``run.py`` and ``audit.py``: the lab's first two commands, kept working under their old flags.

``run.py --out DIR`` is ``lab run``, ``run.py --explore --out DIR`` is ``lab explore``, ``--replay``, ``--list`` and
``--new`` are ``lab replay``, ``lab list`` and ``lab new``. The old flags are checked here as they always were (a
flag the chosen action would ignore is refused in one line, with the same words), then the subcommand runs.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path

from lab.cli.common import Parser
from lab.errors import UsageError


def _run_parser() -> argparse.ArgumentParser:
    parser = Parser(prog="run.py", description="Run the lab's scenarios into a new evidence folder.")
    action = parser.add_mutually_exclusive_group(required=True)
    action.add_argument("--out", metavar="DIR")
    action.add_argument("--replay", metavar="NAME:SCHEDULE")
    action.add_argument("--list", action="store_true")
    action.add_argument("--new", metavar="NAME")
    parser.add_argument("--scenario", action="append", metavar="NAME", default=[])
    parser.add_argument("--watchdog", metavar="SECONDS")
    parser.add_argument("--explore", action="store_true")
    parser.add_argument("--granularity", choices=("probe", "line", "instruction", "both"))
    parser.add_argument("--preemptions", metavar="K")
    parser.add_argument("--sign", metavar="KEYFILE")
    parser.add_argument("--max-schedules", metavar="N")
    parser.add_argument("--variant", metavar="NAME")
    parser.add_argument("--save-scenario", metavar="NAME")
    parser.add_argument("--jobs", metavar="N")
    parser.add_argument("--strategy", metavar="NAME")
    parser.add_argument("--mode", metavar="MODE")
    parser.add_argument("--seed", metavar="N")
    parser.add_argument("--seconds", metavar="S")
    return parser


def run_words(argv: Sequence[str], scenarios: Path) -> list[str]:
    """The ``lab`` subcommand and flags that ``run.py ARGV`` means, over the scenario folder ``scenarios``."""
    args = _run_parser().parse_args(list(argv))
    _check_combinations(args)
    folder = [f"--scenarios={scenarios}"]
    if args.list:
        return ["list", *folder]
    if args.new:
        return ["new", args.new, *folder]
    options = [  # --flag=value: a value such as -inf is not taken for a flag
        f"{flag}={value}"
        for flag, value in (
            ("--watchdog", args.watchdog),
            ("--granularity", args.granularity),
            ("--variant", args.variant),
            ("--preemptions", args.preemptions),
            ("--max-schedules", args.max_schedules),
            ("--save-scenario", args.save_scenario),
            ("--sign", args.sign),
            ("--jobs", args.jobs),
            ("--strategy", args.strategy),
            ("--mode", args.mode),
            ("--seed", args.seed),
            ("--seconds", args.seconds),
        )
        if value is not None
    ]
    if args.replay:
        return ["replay", args.replay, *folder, *options]
    names = [f"--scenario={name}" for name in args.scenario]
    return ["explore" if args.explore else "run", f"--out={args.out}", *folder, *names, *options]


def _check_combinations(args: argparse.Namespace) -> None:
    """Refuse, in one line, a flag the chosen action would ignore: nothing has been written yet."""
    explore, replay = args.explore, args.replay is not None
    if args.sign is not None and not args.out:
        raise UsageError("--sign goes with --out")
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
    for flag, value in (
        ("--preemptions", args.preemptions),
        ("--max-schedules", args.max_schedules),
        ("--jobs", args.jobs),
        ("--strategy", args.strategy),
        ("--mode", args.mode),
        ("--seed", args.seed),
        ("--seconds", args.seconds),
    ):
        if value is not None and not explore:
            raise UsageError(f"{flag} goes with --explore")
    for flag, value in (("--granularity", args.granularity), ("--variant", args.variant)):
        if value is not None and not (explore or replay):
            raise UsageError(
                f"{flag} goes with --explore or --replay; a normal run uses each scenario's own "
                "session and the probe granularity"
            )
    if replay and args.granularity == "both":
        raise UsageError("--replay takes one granularity: probe, line or instruction")


def audit_words(argv: Sequence[str], checkout: Path) -> list[str]:
    """The ``lab audit`` words that ``audit.py ARGV`` means: the trusted tree is the checkout unless named."""
    words = list(argv)
    named = any(word == "--checkout" or word.startswith("--checkout=") for word in words)
    return ["audit", *words, *([] if named else ["--checkout", str(checkout)])]
