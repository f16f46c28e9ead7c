"""Re-verify an evidence folder written by run.py; it never writes anything, into the folder or elsewhere.

    python audit.py DIR                   verify integrity, consistency and sources, and re-execute every scenario
                                          with this checkout's code, if the archived code is identical to it
    python audit.py DIR --no-rerun        the same, without re-execution
    python audit.py DIR --execute-archive re-execute the archived code itself, contained (docs/evidence.md)
    python audit.py DIR --accept-drift    the lab's machinery may differ from this checkout (recorded in the report)
    python audit.py DIR --allowed-signers FILE  require SHA256SUMS.sig to verify (ssh-keygen -Y verify)
    python audit.py DIR --json            print the report as JSON
    python audit.py DIR --checkout PATH   compare with (and run) the trusted tree PATH instead of this checkout

Exit codes: 0 everything verified; 1 problems were found (each listed on one line, with its file), or the run
that wrote DIR did not finish; 2 DIR is not an evidence folder at all, or the arguments are wrong; 130 interrupted.
"""

from __future__ import annotations

import sys

sys.dont_write_bytecode = True  # an audit leaves no trace, not even __pycache__ beside the code it imports

import argparse  # noqa: E402  (after the bytecode switch, on purpose)
import json  # noqa: E402
import math  # noqa: E402
from pathlib import Path  # noqa: E402

from rich.console import Console  # noqa: E402
from rich.text import Text  # noqa: E402

from lab.errors import LabError, UsageError  # noqa: E402
from lab.evidence.auditor import audit  # noqa: E402
from lab.evidence.findings import AuditReport, RerunStatus  # noqa: E402
from lab.evidence.rerun import ARCHIVE  # noqa: E402
from lab.evidence.safefs import printable  # noqa: E402

ROOT = Path(__file__).resolve().parent
TIMEOUT_RANGE = (0.001, 86400.0)
"""The seconds ``--timeout`` accepts: more than nothing, at most a day."""


class _Parser(argparse.ArgumentParser):
    """argparse, but a usage error is one line and exit code 2."""

    def error(self, message: str) -> None:  # type: ignore[override]
        raise UsageError(message)


def _parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="audit.py", description="Re-verify an evidence folder written by run.py.")
    parser.add_argument("folder", type=Path, metavar="DIR", help="the evidence folder to verify")
    parser.add_argument("--no-rerun", action="store_true", help="do not re-execute the archived scenarios")
    parser.add_argument(
        "--execute-archive",
        action="store_true",
        help="re-execute the archive's own code, in a child with a scrubbed environment, a temporary copy, a time "
        "limit and resource limits (default: only this checkout's code runs, when the archive's is identical)",
    )
    parser.add_argument(
        "--accept-drift",
        action="store_true",
        help="accept archived machinery (engine, runner, evidence code) that differs from this checkout; the report "
        "records the files accepted",
    )
    parser.add_argument("--json", action="store_true", help="print the report as JSON")
    parser.add_argument(
        "--checkout",
        type=Path,
        default=ROOT,
        metavar="PATH",
        help="the trusted source tree to compare the archived sources with, and to re-execute them with when they "
        "are identical (default: this checkout)",
    )
    parser.add_argument(
        "--allowed-signers",
        type=Path,
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
    return parser


def main(argv: list[str] | None = None, *, console: Console | None = None) -> int:
    """Parse ``argv``, audit, print the report, and return the exit code."""
    console = console or Console()  # wraps long lines between words, never inside one
    as_json = False
    try:
        args = _parser().parse_args(sys.argv[1:] if argv is None else argv)
        as_json = args.json
        _check_timeout(args.timeout)
        if args.no_rerun and args.execute_archive:
            raise UsageError("--execute-archive and --no-rerun contradict each other: choose one")
        report = audit(
            args.folder,
            rerun=not args.no_rerun,
            checkout=args.checkout,
            timeout=args.timeout,
            execute_archive=args.execute_archive,
            accept_drift=args.accept_drift,
            allowed_signers=_allowed_signers(args.allowed_signers),
        )
    except LabError as error:
        if as_json:
            print(json.dumps({"ok": False, "error": printable(str(error))}))
        print(f"audit.py: {printable(str(error))}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("audit.py: interrupted; nothing was written, and the folder was not judged", file=sys.stderr)
        return 130
    if as_json:
        # ASCII only: an escaped character cannot reach the terminal as a control sequence, whatever the archive held
        print(json.dumps(report.to_json(), indent=2))
    else:
        _render(console, report)
    return 0 if report.ok else 1


def _allowed_signers(path: Path | None) -> Path | None:
    if path is not None and not path.is_file():
        raise UsageError(f"--allowed-signers {path}: not a file")
    return path


def _check_timeout(timeout: float | None) -> None:
    """A finite number of seconds within :data:`TIMEOUT_RANGE` (``nan``, ``inf`` and ``1e300`` are not)."""
    low, high = TIMEOUT_RANGE
    if timeout is not None and not (math.isfinite(timeout) and low <= timeout <= high):
        raise UsageError(f"--timeout needs a number of seconds from {low:g} to {high:g}, not {timeout:g}")


def _render(console: Console, report: AuditReport) -> None:
    """The report, every line passed through :func:`printable`: nothing from the folder reaches the terminal as a
    control character (an escape sequence, a carriage return, a bidirectional override)."""

    def line(*parts: str | tuple[str, str]) -> None:
        console.print(Text.assemble(*(printable(p) if isinstance(p, str) else (printable(p[0]), p[1]) for p in parts)))

    line(f"audit of {report.folder}")
    if report.unfinished:
        for problem in report.problems:
            line(("  PROBLEM ", "red"), str(problem))
        line(
            "result: ", ("UNFINISHED: the run that wrote this folder did not finish; nothing was verified", "bold red")
        )
        return
    line(f"  integrity     {report.files_verified} files match their recorded SHA-256")
    line(f"  consistency   {report.scenarios} scenarios checked against their traces and run.json")
    style = {RerunStatus.MATCHED: "green", RerunStatus.SKIPPED: "yellow"}.get(report.rerun.status, "red")
    line("  re-execution  ", (str(report.rerun.status), style), f": {report.rerun.note}")
    if report.drift is not None:
        line(f"  drift         {_drift_text(report)}")
    if report.signature:
        line(f"  signature     {report.signature}")
    for problem in report.problems:
        line(("  PROBLEM ", "red"), str(problem))
    if not report.ok:
        count = len(report.problems)
        line("result: ", (f"{count} problem{'s' if count != 1 else ''}", "bold red"))
        return
    status = f"; the run's own status is {report.run_status}" if report.run_status else ""
    line("result: ", (_verdict(report), "green"), status)


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
    with this checkout's own code and no drift of the lab's machinery was accepted."""
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


if __name__ == "__main__":
    sys.exit(main())
