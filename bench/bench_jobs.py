"""What --jobs buys: the 4-request race explored with one process and with more, wall time and CPU, records compared.

    python bench/bench_jobs.py [--jobs 2] [--rounds 3] [--actors 4] [--granularity probe]

Prints a table; asserts nothing. The problem is the one ``bench/bench_reduction.py`` times for ``--jobs``: N requests
racing on one versioned session (``bench/models/many_requests.py``, four requesters: 2,520 classes at probe
granularity). Each round explores it once with ``jobs=1`` and once with ``--jobs`` (alternating, so that a machine
whose load changes affects both alike), and prints both wall times and their ratio, the CPU seconds of the one-job
run, of the coordinator (this process: with more than one job it runs no schedule) and of the workers, the *bound*
(the speed-up on cores nobody else uses: the cores x the one-job CPU over all the CPU the jobs took), and whether
the two records are byte-identical (they must be; the timing field is left out). Last, the median ratio and the
spread over the rounds, the median bound, the load average when the bench began, and whether the median meets the
target of 1.7x with 2 jobs. On a machine shared with other work the ratio moves from round to round: read the spread,
not one round; and a machine loaded past its cores gives more processes a larger share of it, so that the wall ratio
overstates what the jobs alone would gain (the bound does not).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.bench_reduction import _with_actors
from lab.evidence.records.exploration import exploration_record
from lab.scenarios.exploring import explore_scenario
from lab.scenarios.loader import LoadedScenario, load

TARGET = 1.7
"""The speed-up of --jobs 2 over --jobs 1 the issue asks for on this race (issue 22)."""


def _race(actors: int) -> LoadedScenario:
    """The N-request race with ``actors`` requesters (the model's methods beyond its two actors made actors)."""
    loaded = load(ROOT / "bench" / "models" / "many_requests.py")
    if not isinstance(loaded, LoadedScenario):
        raise SystemExit(f"cannot load the model: {loaded}")
    return _with_actors(loaded, ("r1", "r2", "r3", "r4")[:actors])  # (it leaves the model's own class as it was)


def _once(loaded: LoadedScenario, granularity: str, jobs: int) -> tuple[float, float, float, str, int]:
    """One exploration: wall seconds, this process's CPU, its children's CPU, the record without timing, the
    executions."""
    before, begun = os.times(), time.perf_counter()
    found = explore_scenario(loaded, granularity=granularity, jobs=jobs)
    wall, after = time.perf_counter() - begun, os.times()
    mine = after.user - before.user + after.system - before.system
    theirs = after.children_user - before.children_user + after.children_system - before.children_system
    record = exploration_record(found, default_variant=True)
    record.pop("timing")
    return wall, mine, theirs, json.dumps(record, sort_keys=True), found.schedules + found.pruned


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--jobs", type=int, default=2, help="processes to compare with one (default 2)")
    parser.add_argument("--rounds", type=int, default=3, help="explorations of each kind, alternating (default 3)")
    parser.add_argument("--actors", type=int, choices=(2, 3, 4), default=4, help="requests racing (default 4)")
    parser.add_argument("--granularity", choices=("probe", "line"), default="probe", help="default probe")
    args = parser.parse_args()
    if args.jobs < 2 or args.rounds < 1:
        raise SystemExit("--jobs must be at least 2 and --rounds at least 1")
    loaded = _race(args.actors)
    explore_scenario(loaded, granularity=args.granularity, max_schedules=2)  # the one-time rewriting of the modules
    load_average = os.getloadavg()[0]
    print(
        f"{args.actors}-request race at {args.granularity} granularity, jobs=1 against jobs={args.jobs}, "
        f"{os.cpu_count()} cores"
    )
    header = f"{'round':>5} {'execs':>5} {'1 job s':>7} {'cpu':>5} {f'{args.jobs} jobs s':>8} {'ratio':>6} "
    header += f"{'coord':>5} {'workers':>7} {'bound':>6} {'records':>9}"
    print(header)
    print("-" * len(header))
    ratios: list[float] = []
    bounds: list[float] = []
    same = True
    cores = min(args.jobs, os.cpu_count() or 1)
    for number in range(1, args.rounds + 1):
        alone, cpu, _, record_alone, executions = _once(loaded, args.granularity, 1)
        shared, coordinator, workers, record_shared, _ = _once(loaded, args.granularity, args.jobs)
        identical = record_alone == record_shared
        same = same and identical
        ratios.append(alone / shared)
        bounds.append(cores * cpu / (coordinator + workers))
        print(
            f"{number:5} {executions:5} {alone:7.2f} {cpu:5.1f} {shared:8.2f} {alone / shared:5.2f}x "
            f"{coordinator:5.1f} {workers:7.1f} {bounds[-1]:5.2f}x {'identical' if identical else 'DIFFERENT':>9}",
            flush=True,
        )
    median = statistics.median(ratios)
    print(
        f"speed-up of jobs={args.jobs}: median {median:.2f}x, from {min(ratios):.2f}x to {max(ratios):.2f}x over "
        f"{args.rounds} rounds"
    )
    print(
        f"bound (the speed-up on {cores} cores nobody else uses: {cores} x the CPU of one job over the CPU of all): "
        f"median {statistics.median(bounds):.2f}x"
    )
    print(f"load average (1 min) when the bench began: {load_average:.2f} on {os.cpu_count()} cores")
    if load_average > (os.cpu_count() or 1):
        print("  a loaded machine gives more processes a larger share of it: the wall ratio overstates, read the bound")
    if args.jobs == 2 and args.actors == 4 and args.granularity == "probe":
        print(f"target {TARGET}x with 2 jobs: {'met' if median >= TARGET else 'NOT met'} (median)")
    print("records: every pair identical" if same else "records: SOME PAIR DIFFERED")


if __name__ == "__main__":
    main()
