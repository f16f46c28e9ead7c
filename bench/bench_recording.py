"""What recording costs: a run of a scenario recorded (as an exploration runs each execution) against it unrecorded.

    python bench/bench_recording.py [--runs N] [--rounds R] [SCENARIO ...]

Prints numbers; asserts nothing. Target (issue 22): a recorded run at most 3x an unrecorded one.

A recorded run is what an exploration pays for each execution: the modules under test rewritten and installed, the
objects that exist before the run named by path, and every access of an actor recorded, by object identity, into
the step that makes it. The unrecorded run is the same scenario under the same (default) policy with none of that:
the original code, nothing named, nothing recorded. At line granularity a run is always recorded (its footprints
decide which lines are scheduling points), so its row is divided by the same unrecorded probe-granularity run: what
a line-granularity execution costs against the plainest run of the scenario.

Each figure is CPU time of this process (every thread) per run, measured as an exploration runs them (the collector
relaxed, :func:`lab.engine.core.collector_relaxed`): R rounds, every round running N runs of each kind one kind after
the other, so that the machine's noise hits every kind alike; the lowest round of each kind is printed (CPU time is
steadier than wall time on a shared machine, and the lowest round the least disturbed).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from lab.engine.core import collector_relaxed
from lab.scenarios.loader import LoadedScenario, load
from lab.scenarios.runner import run_scenario

SCENARIOS = ("scenarios/race_two_requests.py", "bench/models/check_then_act.py")
KINDS = (("probe", False), ("probe", True), ("line", True))
"""(granularity, recorded): the unrecorded run first, the baseline of every ratio."""
TARGET = 3.0


def per_run(loaded: LoadedScenario, granularity: str, recorded: bool, runs: int) -> float:
    """CPU microseconds per run, over ``runs`` runs of ``loaded``."""
    begun = time.process_time()
    for _ in range(runs):
        run_scenario(loaded, granularity=granularity, record_accesses=recorded)
    return (time.process_time() - begun) / runs * 1e6


def main(argv: list[str] | None = None) -> int:
    """Measure, interleaved, and print one table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("scenarios", nargs="*", default=list(SCENARIOS), help="scenario files (default: two)")
    parser.add_argument("--runs", type=int, default=200, help="runs of each kind per round (default 200)")
    parser.add_argument("--rounds", type=int, default=7, help="rounds; the lowest is printed (default 7)")
    args = parser.parse_args(argv)
    if args.runs < 1 or args.rounds < 1:
        print("error: --runs and --rounds must be at least 1", file=sys.stderr)
        return 2
    loaded: dict[str, LoadedScenario] = {}
    for name in args.scenarios:
        path = Path(name) if Path(name).is_file() else ROOT / name
        if not path.is_file():
            print(f"error: no scenario file {name}", file=sys.stderr)
            return 2
        loaded[name] = load(path)
    best: dict[tuple[str, str, bool], float] = {}
    with collector_relaxed():
        for found in loaded.values():  # warm: imports, the rewritten modules, the thread pool, the kept walks
            for granularity, recorded in KINDS:
                per_run(found, granularity, recorded, 20)
        for _ in range(args.rounds):
            for name, found in loaded.items():
                for granularity, recorded in KINDS:
                    cost = per_run(found, granularity, recorded, args.runs)
                    key = (name, granularity, recorded)
                    best[key] = min(cost, best.get(key, cost))
    version = sys.version.split()[0]
    print(
        f"CPU us per run, lowest of {args.rounds} rounds of {args.runs} runs each; Python {version}, "
        f"{os.cpu_count()} CPUs"
    )
    print(f"  {'scenario':<34} {'run':<16} {'us/run':>8} {'ratio':>6} {'target':>6}")
    for name in loaded:
        plain = best[(name, "probe", False)]
        for granularity, recorded in KINDS:
            cost = best[(name, granularity, recorded)]
            kind = f"{granularity}, {'recorded' if recorded else 'unrecorded'}"
            ratio = f"{cost / plain:6.2f}" if recorded else f"{'1':>6}"
            target = f"{TARGET:6.1f}" if granularity == "probe" and recorded else f"{'':>6}"
            print(f"  {Path(name).name:<34} {kind:<16} {cost:>8.0f} {ratio} {target}")
    print("ratio: against the same scenario's unrecorded probe-granularity run, measured in the same rounds")
    return 0


if __name__ == "__main__":
    sys.exit(main())
