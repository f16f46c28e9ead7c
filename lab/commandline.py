# size: one grammar of the commands that run scenarios, shared by the command line and the auditor
"""The grammar of the commands that run scenarios into an evidence folder: ``lab run``, ``lab explore`` and
``run.py``'s old flags, in one place.

Two readers need it and must never disagree. The command line (:mod:`lab.cli`) parses what a person typed with it;
the auditor (:mod:`lab.evidence.verify.completeness`) parses the command ``run.json`` recorded with it, and derives
from it what the folder must hold: which scenarios ran, which explorations were made at which granularities and
variants, whether a kill matrix was built. A command this grammar does not know, or one it would have refused, is a
problem for the auditor, never a reason to skip a check. This module sits below both (it imports neither the
command line nor the evidence package), so neither imports the other through it.
"""

from __future__ import annotations

import argparse
import math
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from lab.engine.search import DEFAULT_MAX_SCHEDULES, MODES, STRATEGIES
from lab.errors import UsageError

DEFAULT_WATCHDOG = 10.0
WATCHDOG_RANGE = (0.01, 3600.0)
"""The seconds a watchdog may be: ``nan`` and ``inf`` would never report a blocked actor, and below a hundredth of
a second ordinary scheduling looks like a hang."""
GRANULARITY_CHOICES = ("probe", "line", "instruction")
BOTH = "both"
"""``--granularity both``: probe and line."""


class Parser(argparse.ArgumentParser):
    """argparse, but a usage error is a :class:`UsageError` (one line, exit code 2), never argparse's two lines."""

    def error(self, message: str) -> None:  # type: ignore[override]
        raise UsageError(message)


def a_path(text: str) -> Path:
    """A path argument; an empty one is refused: ``Path("")`` is the current folder, which nobody wrote."""
    if not text:
        raise argparse.ArgumentTypeError("an empty path names no file or folder (write . for the current folder)")
    return Path(text)


def check_watchdog(seconds: float) -> None:
    """A finite number of seconds within :data:`WATCHDOG_RANGE`, or a :class:`UsageError`."""
    low, high = WATCHDOG_RANGE
    if not (math.isfinite(seconds) and low <= seconds <= high):
        raise UsageError(f"--watchdog needs a number of seconds from {low:g} to {high:g}, not {seconds:g}")


def add_scenarios(parser: argparse.ArgumentParser) -> None:
    """``--scenarios DIR``: the folder of scenario files (default: the checkout's, or ``./scenarios``)."""
    parser.add_argument(
        "--scenarios",
        type=a_path,
        metavar="DIR",
        help="the folder of scenario files (default: the checkout's scenarios/, or ./scenarios with an installed lab)",
    )


def add_watchdog(parser: argparse.ArgumentParser) -> None:
    """``--watchdog SECONDS``."""
    parser.add_argument(
        "--watchdog",
        type=float,
        metavar="SECONDS",
        help="how long an actor may block outside the lab before it is reported, "
        f"{WATCHDOG_RANGE[0]:g} to {WATCHDOG_RANGE[1]:g} (default {DEFAULT_WATCHDOG:g})",
    )


def add_granularity(parser: argparse.ArgumentParser, *, both: bool) -> None:
    """``--granularity``: one of the engine's, or (to explore) ``both``: probe and line."""
    choices = (*GRANULARITY_CHOICES, BOTH) if both else GRANULARITY_CHOICES
    parser.add_argument(
        "--granularity",
        choices=choices,
        help="scheduling points are the lab's primitives and probes, every line, or every access to shared "
        "state (default probe" + ("; both = probe and line)" if both else ")"),
    )


RUN_HELP = {
    "run": "run every scenario (or those named) into a new evidence folder",
    "explore": "run, then explore every interleaving of, the scenarios into a new evidence folder",
}


def add_run_flags(parser: argparse.ArgumentParser, *, explore: bool) -> None:
    """The flags of ``lab run`` (and, with ``explore``, of ``lab explore``)."""
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
    parser.add_argument(
        "--resume",
        action="store_true",
        help="finish the unfinished folder DIR this same command began: run only the scenarios it lacks",
    )
    if not explore:
        return
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
    parser.add_argument(
        "--cross-check",
        type=int,
        metavar="N",
        default=0,
        help="then run each explored scenario's actors N times on free real threads: an outcome they reach that "
        "no explored schedule did is a MODEL GAP, and the exploration FAILs (default 0: none)",
    )


@dataclass(frozen=True, slots=True)
class RunRequest:
    """What a command that runs scenarios asks for, checked: the one reading of its flags."""

    out: Path
    names: tuple[str, ...] = ()
    watchdog: float = DEFAULT_WATCHDOG
    sign: Path | None = None
    explore: bool = False
    granularities: tuple[str, ...] = ("probe",)
    preemptions: int | None = None
    max_schedules: int = DEFAULT_MAX_SCHEDULES
    variant: str | None = None
    jobs: int = 1
    strategy: str = "dpor"
    mode: str = "prove"
    seed: int = 0
    seconds: float | None = None
    save_scenario: str | None = None
    cross_check: int = 0
    """Real runs per exploration on free threads (``--cross-check N``; 0: none), kept apart from the records."""
    resume: bool = False
    """Finish the unfinished folder ``out`` that this same command began (``--resume``), not a new one."""

    @property
    def selected(self) -> tuple[str, ...]:
        """The scenarios named, once each, in the order first given (none: every file of the folder)."""
        return tuple(dict.fromkeys(self.names))


def run_request(args: argparse.Namespace, *, explore: bool) -> RunRequest:
    """The request the parsed flags make, or a :class:`UsageError` for a value the run would refuse."""
    watchdog = args.watchdog if args.watchdog is not None else DEFAULT_WATCHDOG
    check_watchdog(watchdog)
    base = RunRequest(out=args.out, names=tuple(args.scenario), watchdog=watchdog, sign=args.sign, resume=args.resume)
    if not explore:
        return base
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
    if args.cross_check < 0:
        raise UsageError("--cross-check needs a number of real runs >= 1 (0: none)")
    granularities = ("probe", "line") if args.granularity == BOTH else (args.granularity or "probe",)
    return RunRequest(
        out=base.out,
        names=base.names,
        watchdog=base.watchdog,
        sign=base.sign,
        explore=True,
        granularities=granularities,
        preemptions=args.preemptions,
        max_schedules=args.max_schedules,
        variant=args.variant,
        jobs=args.jobs,
        strategy=args.strategy,
        mode=args.mode,
        seed=args.seed,
        seconds=args.seconds,
        save_scenario=args.save_scenario,
        cross_check=args.cross_check,
        resume=base.resume,
    )


def lab_run_parser(prog: str = "lab") -> argparse.ArgumentParser:
    """A parser of ``run`` and ``explore`` alone, with exactly the flags the command line gives them."""
    top = Parser(prog=prog, add_help=False)
    commands = top.add_subparsers(dest="command", required=True, parser_class=Parser)
    for name, text in RUN_HELP.items():
        add_run_flags(commands.add_parser(name, help=text, add_help=False), explore=name == "explore")
    return top


# ``run.py``: the lab's first command, under its old flags


def _legacy_parser() -> argparse.ArgumentParser:
    parser = Parser(prog="run.py", description="Run the lab's scenarios into a new evidence folder.")
    action = parser.add_mutually_exclusive_group(required=True)
    action.add_argument("--out", metavar="DIR")
    action.add_argument("--replay", metavar="NAME:SCHEDULE")
    action.add_argument("--list", action="store_true")
    action.add_argument("--new", metavar="NAME")
    parser.add_argument("--scenario", action="append", metavar="NAME", default=[])
    parser.add_argument("--watchdog", metavar="SECONDS")
    parser.add_argument("--explore", action="store_true")
    parser.add_argument("--resume", action="store_true")
    parser.add_argument("--granularity", choices=(*GRANULARITY_CHOICES, BOTH))
    for flag, meta in (
        ("--preemptions", "K"),
        ("--sign", "KEYFILE"),
        ("--max-schedules", "N"),
        ("--variant", "NAME"),
        ("--save-scenario", "NAME"),
        ("--jobs", "N"),
        ("--strategy", "NAME"),
        ("--mode", "MODE"),
        ("--seed", "N"),
        ("--seconds", "S"),
        ("--cross-check", "N"),
    ):
        parser.add_argument(flag, metavar=meta)
    return parser


def run_words(argv: Sequence[str], scenarios: Path | None) -> list[str]:
    """The ``lab`` subcommand and flags that ``run.py ARGV`` means, over the scenario folder ``scenarios``."""
    args = _legacy_parser().parse_args(list(argv))
    _check_combinations(args)
    folder = [f"--scenarios={scenarios}"] if scenarios is not None else []
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
            ("--cross-check", args.cross_check),
        )
        if value is not None
    ]
    if args.replay:
        return ["replay", args.replay, *folder, *options]
    names = [f"--scenario={name}" for name in args.scenario]
    resume = ["--resume"] if args.resume else []
    return ["explore" if args.explore else "run", f"--out={args.out}", *folder, *names, *options, *resume]


def _check_combinations(args: argparse.Namespace) -> None:
    """Refuse, in one line, a flag the chosen action would ignore: nothing has been written yet."""
    explore, replay = args.explore, args.replay is not None
    if args.sign is not None and not args.out:
        raise UsageError("--sign goes with --out")
    if args.save_scenario and not args.explore:
        raise UsageError("--save-scenario goes with --explore")
    if args.explore and not args.out:
        raise UsageError("--explore needs --out DIR")
    if args.resume and not args.out:
        raise UsageError("--resume goes with --out DIR, the unfinished folder")
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
        ("--cross-check", args.cross_check),
    ):
        if value is not None and not explore:
            raise UsageError(f"{flag} goes with --explore")
    for flag, value in (("--granularity", args.granularity), ("--variant", args.variant)):
        if value is not None and not (explore or replay):
            raise UsageError(
                f"{flag} goes with --explore or --replay; a normal run uses each scenario's own "
                "session and the probe granularity"
            )
    if replay and args.granularity == BOTH:
        raise UsageError("--replay takes one granularity: probe, line or instruction")


# reading a recorded command back


def parse_recorded(command: object) -> RunRequest:
    """The request a command recorded in ``run.json`` made, read with the grammar the command line uses; a
    :class:`UsageError` saying why for anything else: not a list of words, not a command that runs scenarios
    (``lab list``, a replay, another program), or one the command line would have refused."""
    if not isinstance(command, list) or not all(isinstance(word, str) for word in command):
        raise UsageError("is not a list of words")
    if not command:
        raise UsageError("is empty")
    program = Path(command[0]).name
    words = list(command[1:])
    if program == "run.py":
        words = run_words(words, None)
    elif program != "lab":
        raise UsageError(f"is run by {program!r}, which is neither run.py nor lab")
    if words[:1] not in (["run"], ["explore"]):
        raise UsageError(f"is {' '.join([program, *words[:1]])!r}, which runs no scenarios into a folder")
    args, extra = lab_run_parser(program).parse_known_args(words)
    if extra:
        raise UsageError(f"has words {program} {words[0]} does not take: {' '.join(extra)}")
    return run_request(args, explore=args.command == "explore")
