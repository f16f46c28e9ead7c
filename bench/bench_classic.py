"""The classic-bugs benchmark: every program of ``bench/classic`` under each of the lab's search strategies.

For each program and strategy it prints FAIL@<executions to the first bug>, PASS, INCOMPLETE (the budget or the
time ran out) or CRASH (the lab itself raised something other than a failed exploration), then a summary per
strategy: the bugs found out of the buggy programs, the median executions and seconds to the first bug, the verdicts
on the correct programs, and every wrong verdict (PASS on a buggy program, FAIL on a correct one), loudly.

``--peers`` adds the columns of frontrun (random and DPOR) and interleave-test (PCT), run through the adapters of
``bench/classic/peers.py``, and a line comparing median executions to the first bug against them. Run it with an
interpreter that has them installed (they are never the lab's dependencies)::

    python bench/bench_classic.py --programs account_bad,stack_bad --budget 2000
    /work/bench-venv/bin/python bench/bench_classic.py --peers
"""

from __future__ import annotations

import argparse
import importlib
import inspect
import statistics
import sys
import time
import types
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.classic import PROGRAMS
from bench.classic.peers import NOT_INSTALLED, PEER_MODULES, PEERS, installed
from lab.testing import ExplorationFailed, explore_code

WIDTH = 80
ALL_STRATEGIES = ("portfolio", "dpor", "pct", "random", "ipb", "idb")


@dataclass(frozen=True)
class Cell:
    """One program under one strategy."""

    verdict: str
    executions: int | None
    seconds: float
    detail: str = ""

    @property
    def text(self) -> str:
        if self.verdict == "FAIL":
            return f"FAIL@{self.executions}" if self.executions is not None else "FAIL@?"
        if self.verdict == NOT_INSTALLED:
            return "n/i"
        return self.verdict


def _supports_strategies() -> bool:
    return "strategy" in inspect.signature(explore_code).parameters


def run_lab(program: types.ModuleType, strategy: str, budget: int, seconds: float) -> Cell:
    """One exploration of ``program`` by the lab: FAIL with the executions to the first failing one, or not."""
    options: dict[str, object] = {}
    if _supports_strategies():
        options.update(strategy=strategy, seed=0, mode="find", seconds=seconds)
    start = time.perf_counter()
    try:
        found = explore_code(
            setup=program.setup,
            actors=program.ACTORS,
            check=program.check,
            under_test=[program],
            max_schedules=budget,
            name=program.__name__.rsplit(".", 1)[-1],
            **options,  # type: ignore[arg-type]
        )
    except ExplorationFailed as failed:
        found = failed.found
    except Exception as error:
        return Cell("CRASH", None, time.perf_counter() - start, f"{type(error).__name__}: {error}")
    took = float(getattr(found, "seconds", 0.0) or (time.perf_counter() - start))
    verdict = str(getattr(found.verdict, "name", found.verdict))
    if verdict == "FAIL":
        first = getattr(found, "first_failure", None)
        return Cell("FAIL", int(first) if first is not None else int(found.executions), took)
    return Cell(verdict, int(found.executions), took)


def _wrong(buggy: bool, cell: Cell) -> bool:
    return (buggy and cell.verdict == "PASS") or (not buggy and cell.verdict == "FAIL")


def _median(values: Sequence[float]) -> str:
    return f"{statistics.median(values):g}" if values else "-"


def _table(programs: Sequence[types.ModuleType], columns: Sequence[str], cells: dict[tuple[str, str], Cell]) -> None:
    name_width = max(len(_name(p)) for p in programs) + 2  # the name, its correct-program mark, a space
    texts = [_shown(cells[(_name(p), c)], p.BUGGY) for p in programs for c in columns]
    width = max(9, *(len(c) + 1 for c in columns), *(len(t) + 1 for t in texts))  # nothing is ever cut
    if len(columns) > 1 and name_width + width * len(columns) > WIDTH:  # too wide for one line: in slices
        per_line = max(1, (WIDTH - name_width) // width)
        for start in range(0, len(columns), per_line):
            _table(programs, columns[start : start + per_line], cells)
            print()
        return
    print("program".ljust(name_width) + "".join(c.rjust(width) for c in columns))
    print("-" * (name_width + width * len(columns)))
    for program in programs:
        mark = "" if program.BUGGY else "*"
        row = (_name(program) + mark).ljust(name_width)
        for column in columns:
            row += _shown(cells[(_name(program), column)], program.BUGGY).rjust(width)
        print(row)


def _shown(cell: Cell, buggy: bool) -> str:
    """A cell as the table shows it: INCOMPLETE as INC (the legend says so), ``!`` after a wrong verdict."""
    return cell.text.replace("INCOMPLETE", "INC") + ("!" if _wrong(buggy, cell) else "")


def _name(program: types.ModuleType) -> str:
    return program.__name__.rsplit(".", 1)[-1]


def _summary(programs: Sequence[types.ModuleType], columns: Sequence[str], cells: dict[tuple[str, str], Cell]) -> None:
    buggy = [p for p in programs if p.BUGGY]
    correct = [p for p in programs if not p.BUGGY]
    print(f"summary ({len(buggy)} buggy, {len(correct)} correct programs; * marks a correct one, ! a wrong verdict)")
    print("  (INC in the table is INCOMPLETE: the budget or the time ran out first)")
    wrong: list[str] = []
    medians: dict[str, float] = {}
    for column in columns:
        found = [cells[(_name(p), column)] for p in buggy if cells[(_name(p), column)].verdict == "FAIL"]
        if all(cells[(_name(p), column)].verdict == NOT_INSTALLED for p in programs):
            print(f"  {column}: not installed")
            continue
        executions = [c.executions for c in found if c.executions is not None]
        if executions:
            medians[column] = statistics.median(executions)
        on_correct = [cells[(_name(p), column)].verdict for p in correct]
        crashes = sum(cells[(_name(p), column)].verdict == "CRASH" for p in programs)
        print(
            f"  {column}: {len(found)}/{len(buggy)} bugs found; to the first bug: median "
            f"{_median(executions)} executions, {_median([round(c.seconds, 2) for c in found])} s"
        )
        print(
            f"    correct ones: {on_correct.count('PASS')} PASS, {on_correct.count('INCOMPLETE')} INCOMPLETE"
            + (f", {crashes} CRASH" if crashes else "")
        )
        for program in programs:
            cell = cells[(_name(program), column)]
            if _wrong(program.BUGGY, cell):
                kind = "buggy" if program.BUGGY else "correct"
                wrong.append(f"{column} says {cell.verdict} on the {kind} program {_name(program)}")
            if cell.verdict == "CRASH":
                print(f"    CRASH on {_name(program)}: {cell.detail[: WIDTH - 20]}")
    for line in wrong:
        print(f"!!! WRONG VERDICT: {line}")
    if not wrong:
        print("no wrong verdict")
    peers = [p.name for p in PEERS if p.name in medians]
    lab = [c for c in columns if c in ALL_STRATEGIES and c in medians]
    if peers and lab:  # each median is over the bugs that strategy found
        ours = ", ".join(f"{c} {medians[c]:g}" for c in lab)
        theirs = ", ".join(f"{peer} {medians[peer]:g}" for peer in peers)
        print(f"median executions to first bug against the peers: lab {ours}; peers {theirs}")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--budget", type=int, default=10000, help="schedules per program per strategy")
    parser.add_argument("--seconds", type=float, default=30.0, help="seconds per program per strategy")
    parser.add_argument("--strategies", default=",".join(ALL_STRATEGIES), help="comma-separated lab strategies")
    parser.add_argument("--programs", default="", help="comma-separated programs (default: all)")
    parser.add_argument("--peers", action="store_true", help="add frontrun's and interleave-test's columns")
    args = parser.parse_args(argv)

    names = [n for n in args.programs.split(",") if n] or list(PROGRAMS)
    unknown = [n for n in names if n not in PROGRAMS]
    if unknown:
        parser.error(f"unknown programs: {', '.join(unknown)}")
    strategies = [s for s in args.strategies.split(",") if s]
    if not _supports_strategies():
        print("this lab's explore_code takes no strategy: running dpor only")
        strategies = ["dpor"]
    programs = [importlib.import_module(f"bench.classic.{n}") for n in names]
    columns = list(strategies)
    if args.peers:
        for peer in PEERS:
            if installed(PEER_MODULES[peer.name]):
                columns.append(peer.name)
            else:
                print(f"{peer.name}: not installed (install it beside the lab to add its column)")

    cells: dict[tuple[str, str], Cell] = {}
    for program in programs:
        for column in columns:
            if column in strategies:
                cell = run_lab(program, column, args.budget, args.seconds)
            else:
                peer = next(p for p in PEERS if p.name == column)
                result = peer.run(program, args.budget, args.seconds)
                cell = Cell(result.verdict, result.executions, result.seconds, result.detail)
            cells[(_name(program), column)] = cell
            print(f"  {_name(program)} {column}: {cell.text} in {cell.seconds:.2f} s", file=sys.stderr, flush=True)
    print(f"classic bugs: budget {args.budget} schedules, {args.seconds:g} s per program per strategy")
    _table(programs, columns, cells)
    print()
    _summary(programs, columns, cells)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
