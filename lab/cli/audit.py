"""``lab audit DIR``: re-verify an evidence folder; it never writes anything, into the folder or elsewhere.

By default the archived sources are compared with (and, when identical, re-executed by) this lab and the scenario
folder (``--scenarios``, default as ``lab run``'s), laid out as a checkout (:func:`~lab.evidence.records.sources.
source_root`); ``--checkout PATH`` names a source tree instead. Exit codes: 0 everything verified; 1 problems were
found (each on one line, with its file), or the run that wrote DIR did not finish; 2 DIR is not an evidence folder,
or the arguments are wrong; 130 interrupted.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import math
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.text import Text

from lab.campaign import default_scenarios, lab_root
from lab.cli.common import Output, a_path, add_scenarios
from lab.cli.progress import AuditProgress
from lab.errors import UsageError
from lab.evidence.records.findings import AuditReport, Problem, RerunStatus
from lab.evidence.records.safefs import printable
from lab.evidence.records.sources import source_root
from lab.evidence.reexecute.rerun import ARCHIVE
from lab.evidence.verify.auditor import audit
from lab.render import Hanging

TIMEOUT_RANGE = (0.001, 86400.0)
"""The seconds ``--timeout`` accepts: more than nothing, at most a day."""


def add(commands: Any) -> None:
    """Register ``audit``."""
    parser = commands.add_parser(
        "audit",
        help="re-verify an evidence folder (integrity, consistency, sources, re-execution)",
        description="Re-verify an evidence folder written by lab run; nothing is written anywhere.",
    )
    parser.add_argument("folder", type=a_path, metavar="DIR", help="the evidence folder to verify")
    add_scenarios(parser)
    parser.add_argument("--no-rerun", action="store_true", help="do not re-execute the archived scenarios")
    parser.add_argument(
        "--execute-archive",
        action="store_true",
        help="re-execute the archive's own code, in a child with a scrubbed environment, a temporary copy, a time "
        "limit and resource limits (default: only this lab's code runs, when the archive's is identical)",
    )
    parser.add_argument(
        "--accept-drift",
        action="store_true",
        help="accept archived machinery (engine, runner, evidence code) that differs from this lab; the report "
        "records the files accepted",
    )
    parser.add_argument("--json", action="store_true", help="print the report as JSON")
    parser.add_argument(
        "--checkout",
        type=a_path,
        metavar="PATH",
        help="the trusted source tree (lab/ and scenarios/) to compare the archived sources with, and to "
        "re-execute them with when they are identical (default: this lab and the scenario folder)",
    )
    parser.add_argument(
        "--allowed-signers",
        type=a_path,
        metavar="FILE",
        help="an OpenSSH allowed-signers file: SHA256SUMS.sig must verify against it (ssh-keygen -Y verify)",
    )
    parser.add_argument(
        "--timeout",
        type=float,
        default=None,
        metavar="SECONDS",
        help="how long re-execution may take, 0.001 to 86400 (default: 60 s plus any recorded hang and exploration)",
    )
    parser.set_defaults(handler=main)


def main(args: argparse.Namespace, output: Output) -> int:
    """Audit, print the report (or JSON), and return the exit code."""
    _check_timeout(args.timeout)
    if args.no_rerun and args.execute_archive:
        raise UsageError("--execute-archive and --no-rerun contradict each other: choose one")
    if args.checkout is not None and args.scenarios is not None:
        raise UsageError("--checkout names a tree with its own scenarios/; --scenarios goes without it")
    if args.allowed_signers is not None and not args.allowed_signers.is_file():
        raise UsageError(f"--allowed-signers {args.allowed_signers}: not a file")
    quiet = Output(Console(quiet=True), output.prog, output.err) if args.json and not output.live else output
    with _trusted_tree(args) as (checkout, shown), AuditProgress(quiet) as progress:
        report = audit(
            args.folder,
            rerun=not args.no_rerun,
            checkout=checkout,
            timeout=args.timeout,
            execute_archive=args.execute_archive,
            accept_drift=args.accept_drift,
            allowed_signers=args.allowed_signers,
            progress=progress,
        )
        report = _named(report, str(checkout), shown)
    if args.json:
        # ASCII only: an escaped character cannot reach the terminal as a control sequence, whatever the archive held
        print(json.dumps(report.to_json(), indent=2))
    else:
        render(output.out, report)
        output.raise_unwritten()  # the report could not be shown: the command ends on that
    return 0 if report.ok else 1


@contextlib.contextmanager
def _trusted_tree(args: argparse.Namespace) -> Iterator[tuple[Path, str]]:
    """The tree the audit compares with and runs, and how to name it to a person."""
    if args.checkout is not None:
        if not args.checkout.is_dir():
            raise UsageError(f"--checkout {args.checkout}: not a folder")
        yield args.checkout, str(args.checkout)
        return
    root = args.root if args.root is not None else lab_root()
    scenarios = args.scenarios if args.scenarios is not None else default_scenarios()
    if args.scenarios is not None and not scenarios.is_dir():
        raise UsageError(f"--scenarios {scenarios}: not a folder")
    with source_root(root, scenarios) as tree:
        shown = str(root) if tree == root else f"{root / 'lab'} with the scenarios of {scenarios}"
        yield tree, shown


def _named(report: AuditReport, staged: str, shown: str) -> AuditReport:
    """The report with a temporary copy's path replaced by what it is a copy of."""
    if staged == shown:
        return report
    problems = tuple(Problem(p.file, p.reason.replace(staged, shown)) for p in report.problems)
    drift = replace(report.drift, checkout=shown) if report.drift is not None else None
    rerun = replace(report.rerun, note=report.rerun.note.replace(staged, shown))
    return replace(report, problems=problems, drift=drift, rerun=rerun)


def _check_timeout(timeout: float | None) -> None:
    """A finite number of seconds within :data:`TIMEOUT_RANGE` (``nan``, ``inf`` and ``1e300`` are not)."""
    low, high = TIMEOUT_RANGE
    if timeout is not None and not (math.isfinite(timeout) and low <= timeout <= high):
        raise UsageError(f"--timeout needs a number of seconds from {low:g} to {high:g}, not {timeout:g}")


def render(console: Console, report: AuditReport) -> None:
    """The report, every line passed through :func:`printable`: nothing from the folder reaches the terminal as a
    control character (an escape sequence, a carriage return, a bidirectional override). Long lines wrap between
    words at the console's width."""

    def line(*parts: str | tuple[str, str], rest: int = 4) -> None:
        text = Text.assemble(*(printable(p) if isinstance(p, str) else (printable(p[0]), p[1]) for p in parts))
        console.print(Hanging(text, rest=rest))  # a continuation line is indented under its label

    line(f"audit of {report.folder}")
    if report.unfinished:
        for problem in report.problems:
            line(("  PROBLEM ", "red"), str(problem))
        line(
            "result: ", ("UNFINISHED: the run that wrote this folder did not finish; nothing was verified", "bold red")
        )
        return
    line(f"  integrity     {report.files_verified} files match their recorded SHA-256", rest=16)
    line(f"  consistency   {report.scenarios} scenarios checked against their traces and run.json", rest=16)
    style = {RerunStatus.MATCHED: "green", RerunStatus.SKIPPED: "yellow"}.get(report.rerun.status, "red")
    line("  re-execution  ", (str(report.rerun.status), style), f": {report.rerun.note}", rest=16)
    if report.drift is not None:
        line(f"  drift         {_drift_text(report)}", rest=16)
    if report.signature:
        line(f"  signature     {report.signature}", rest=16)
    for problem in report.problems:
        line(("  PROBLEM ", "red"), str(problem))
    if not report.ok:
        count = len(report.problems)
        line("result: ", (f"{count} problem{'s' if count != 1 else ''}", "bold red"))
        return
    status = f"; the run's own status is {report.run_status}" if report.run_status else ""
    line("result: ", (_verdict(report), "green"), status, rest=8)


def _drift_text(report: AuditReport) -> str:
    drift = report.drift
    assert drift is not None
    if not drift.files:
        return f"none: the archived sources equal {drift.checkout}"
    changes = [
        *(f"{p} (changed)" for p in drift.changed),
        *(f"{p} (added)" for p in drift.added),
        *(f"{p} (removed)" for p in drift.removed),
    ]
    text = f"{drift.files} files differ from {drift.checkout}: {', '.join(changes)}"
    if report.accepted_drift:
        text += f"; {len(report.accepted_drift)} of them are the lab's machinery, accepted with --accept-drift"
    return text


def _verdict(report: AuditReport) -> str:
    """The OK line says exactly what "OK" covered: a plain "everything verified" only when the scenarios ran again
    with this lab's own code and no drift of the lab's machinery was accepted."""
    if report.rerun.status is RerunStatus.SKIPPED and report.rerun.code == "":
        if report.rerun.note.startswith("re-execution skipped (--no-rerun)"):
            verdict = "OK: verified without re-execution (--no-rerun)"
        else:
            verdict = "OK: everything verified (nothing to re-execute)"
    elif report.rerun.code == ARCHIVE:
        verdict = "OK: everything verified, re-executing the archived code (--execute-archive)"
    else:
        verdict = "OK: everything verified"
    if report.accepted_drift:
        verdict += f", with {len(report.accepted_drift)} files of the lab's machinery differing (--accept-drift)"
    return verdict
