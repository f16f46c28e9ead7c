"""Run the lab's scenarios into a new evidence folder.

    python run.py --out evidence/my-run [--scenario NAME ...]   run, print a summary, write the evidence
    python run.py --list                                        list scenarios and their lessons
    python run.py --new NAME                                    write a new scenario file from the template

Exit codes: 0 every check passed; 1 a check failed or a scenario errored (the evidence is still written);
2 a usage error (unknown scenario, existing folder, bad flags), with nothing written.
"""

from __future__ import annotations

import argparse
import sys
from datetime import UTC, datetime
from pathlib import Path

from rich.console import Console

from lab.errors import LabError, UsageError
from lab.evidence.writer import create_evidence_folder, write_evidence
from lab.render import list_table, print_failures, summary_table
from lab.scenarios.loader import BrokenScenario, LoadedScenario, load_all
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
    action.add_argument("--list", action="store_true", help="list the scenarios and their lessons")
    action.add_argument("--new", metavar="NAME", help="write scenarios/NAME.py from the commented template")
    parser.add_argument("--scenario", action="append", metavar="NAME", default=[],
                        help="run only this scenario (repeatable)")
    parser.add_argument("--watchdog", type=float, default=10.0, metavar="SECONDS",
                        help="how long an actor may block outside the lab before it is reported (default 10)")
    return parser


def main(argv: list[str] | None = None, *, console: Console | None = None) -> int:
    """Parse ``argv``, act, and return the exit code."""
    console = console or Console()
    args_list = sys.argv[1:] if argv is None else argv
    try:
        args = _parser().parse_args(args_list)
        if args.list:
            console.print(list_table(load_all(SCENARIOS)))
            return 0
        if args.new:
            path = write_template(SCENARIOS, args.new)
            console.print(f"wrote {path.relative_to(ROOT)}; run it with: python run.py --out evidence/try-{args.new} "
                          f"--scenario {args.new}", markup=False, highlight=False)
            return 0
        return _run(args.out, args.scenario, args.watchdog, ["run.py", *args_list], console)
    except LabError as error:
        print(f"run.py: {error}", file=sys.stderr)
        return 2


def _run(out: Path, names: list[str], watchdog: float, command: list[str], console: Console) -> int:
    if watchdog <= 0:
        raise UsageError("--watchdog needs a positive number of seconds")
    items = _select(load_all(SCENARIOS), names)
    folder = create_evidence_folder(out)
    started = datetime.now(UTC)
    results: list[ScenarioResult] = []
    broken: list[BrokenScenario] = []
    for item in items:
        if isinstance(item, BrokenScenario):
            broken.append(item)
            console.print(f"[red]broken scenario[/] {item}", highlight=False)
        else:
            results.append(run_scenario(item, watchdog_seconds=watchdog))
    console.print(summary_table(results))
    print_failures(console, results)
    audit = write_evidence(folder, results, broken, root=ROOT, command=command, started=started,
                           ended=datetime.now(UTC))
    ok = not broken and all(result.passed for result in results)
    console.print(f"evidence written to {out} ({'all checks passed' if ok else 'SOME CHECKS FAILED'}; "
                  f"self-audit {'ok' if audit.ok else 'FOUND PROBLEMS'})", markup=False, highlight=False)
    return 0 if ok and audit.ok else 1


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
