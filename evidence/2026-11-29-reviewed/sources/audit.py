"""Re-verify an evidence folder written by run.py; it never writes anything, into the folder or elsewhere.

    python audit.py DIR                  verify integrity, consistency and sources, and re-execute every scenario
    python audit.py DIR --no-rerun       the same, without re-execution
    python audit.py DIR --json           print the report as JSON
    python audit.py DIR --checkout PATH  report drift against PATH instead of the checkout holding audit.py

Exit codes: 0 everything verified; 1 problems were found (each listed on one line, with its file);
2 DIR is not an evidence folder at all, or the arguments are wrong.
"""

from __future__ import annotations

import sys

sys.dont_write_bytecode = True  # an audit leaves no trace, not even __pycache__ beside the code it imports

import argparse  # noqa: E402  (after the bytecode switch, on purpose)
import json  # noqa: E402
from pathlib import Path  # noqa: E402

from rich.console import Console  # noqa: E402
from rich.text import Text  # noqa: E402

from lab.errors import LabError, UsageError  # noqa: E402
from lab.evidence.auditor import audit  # noqa: E402
from lab.evidence.findings import AuditReport, RerunStatus  # noqa: E402

ROOT = Path(__file__).resolve().parent


class _Parser(argparse.ArgumentParser):
    """argparse, but a usage error is one line and exit code 2."""

    def error(self, message: str) -> None:  # type: ignore[override]
        raise UsageError(message)


def _parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="audit.py", description="Re-verify an evidence folder written by run.py.")
    parser.add_argument("folder", type=Path, metavar="DIR", help="the evidence folder to verify")
    parser.add_argument("--no-rerun", action="store_true", help="do not re-execute the archived scenarios")
    parser.add_argument("--json", action="store_true", help="print the report as JSON")
    parser.add_argument("--checkout", type=Path, default=ROOT, metavar="PATH",
                        help="the source tree to compare the archived sources with (default: this checkout)")
    parser.add_argument("--timeout", type=float, default=None, metavar="SECONDS",
                        help="how long re-execution may take (default: 60 s plus any recorded hang)")
    return parser


def main(argv: list[str] | None = None, *, console: Console | None = None) -> int:
    """Parse ``argv``, audit, print the report, and return the exit code."""
    console = console or Console(soft_wrap=True)
    as_json = False
    try:
        args = _parser().parse_args(sys.argv[1:] if argv is None else argv)
        as_json = args.json
        if args.timeout is not None and args.timeout <= 0:
            raise UsageError("--timeout needs a positive number of seconds")
        report = audit(args.folder, rerun=not args.no_rerun, checkout=args.checkout, timeout=args.timeout)
    except LabError as error:
        if as_json:
            print(json.dumps({"ok": False, "error": str(error)}, ensure_ascii=False))
        print(f"audit.py: {error}", file=sys.stderr)
        return 2
    if as_json:
        print(json.dumps(report.to_json(), indent=2, ensure_ascii=False))
    else:
        _render(console, report)
    return 0 if report.ok else 1


def _render(console: Console, report: AuditReport) -> None:
    console.print(Text(f"audit of {report.folder}"))
    console.print(Text(f"  integrity     {report.files_verified} files match their recorded SHA-256"))
    console.print(Text(f"  consistency   {report.scenarios} scenarios checked against their traces and run.json"))
    style = {RerunStatus.MATCHED: "green", RerunStatus.SKIPPED: "yellow"}.get(report.rerun.status, "red")
    console.print(Text.assemble("  re-execution  ", (str(report.rerun.status), style), f": {report.rerun.note}"))
    if report.drift is not None:
        drift = report.drift
        changes = [*(f"{p} (changed)" for p in drift.changed), *(f"{p} (added)" for p in drift.added),
                   *(f"{p} (removed)" for p in drift.removed)]
        text = (f"{drift.files} files differ from {drift.checkout} (not a failure): {', '.join(changes)}"
                if changes else f"none: the archived sources equal {drift.checkout}")
        console.print(Text(f"  drift         {text}"))
    for problem in report.problems:
        console.print(Text.assemble(("  PROBLEM ", "red"), str(problem)))
    verdict = ("OK: everything verified", "green") if report.ok else (f"{len(report.problems)} problems", "bold red")
    console.print(Text.assemble("result: ", verdict))


if __name__ == "__main__":
    sys.exit(main())
