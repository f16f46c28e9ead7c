"""What exploration costs: schedules per second, what the reduction saves, and a scheduling step against the floor.

    python bench/bench_explore.py [--repeat R] [--handoffs N] [--naive-budget S]

Prints numbers; asserts nothing. Three measurements, in one run so they share the machine's state:

(a) schedules per second exploring ``race_two_requests`` (the ``out_of_order_commit`` story as a race scenario) over
    the correct ``VersionedSession``, at probe and at line granularity;
(b) schedules run with the reduction (DPOR and sleep sets) against a naive enumeration, ``explore_scenario(...,
    reduction=False)`` really run, beside the multinomial ``naive_bound``. The naive run of ``race_two_requests``
    (about 130 000 schedules, a few minutes: timed once) is given a budget of S schedules; when it does not finish
    within it (``--naive-budget 3000`` for a quick run), the table says so and the comparison is made on
    ``race_duplicate_delivery``, whose naive enumeration takes a fraction of a second;
(c) the per-step floor: a raw two-thread ``threading.Event`` ping-pong (seconds per handoff), and the explorer's
    seconds per scheduling step (a whole exploration's seconds over the decisions of all its runs), as a ratio.

Milliseconds per execution against the floor, beside the previous engine's in the same run, are
bench/bench_execution.py's (``--baseline PATH``). Other timed values are medians of R repeats; counts are the same
every time (the search is deterministic). Decisions are counted by wrapping the runner that ``explore_scenario``
calls, for the duration of the measurement only.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any
from unittest import mock

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.floor import event_ping_pong
from lab.scenarios import exploring
from lab.scenarios.exploring import ScenarioExploration, explore_scenario
from lab.scenarios.loader import LoadedScenario, load
from lab.scenarios.runner import ScenarioResult, run_scenario


@contextmanager
def _counting_decisions() -> Iterator[list[int]]:
    """Count the scheduling decisions of every run the explorer makes (pruned runs and the replay included)."""
    counted = [0]

    def counting(*args: Any, **kwargs: Any) -> ScenarioResult:
        result = run_scenario(*args, **kwargs)
        counted[0] += len(result.run.decisions) if result.run is not None else 0
        return result

    with mock.patch.object(exploring, "run_scenario", counting):
        yield counted


def explore_timed(loaded: LoadedScenario, **options: Any) -> tuple[ScenarioExploration, float, int]:
    """One exploration: what it found, its wall seconds, and the decisions of all its runs."""
    with _counting_decisions() as counted:
        begun = time.perf_counter()
        found = explore_scenario(loaded, **options)
        seconds = time.perf_counter() - begun
    return found, seconds, counted[0]


def _load(name: str) -> LoadedScenario:
    loaded = load(ROOT / "scenarios" / f"{name}.py")
    if not isinstance(loaded, LoadedScenario):
        raise SystemExit(f"scenarios/{name}.py does not load: {loaded}")
    return loaded


def _median_run(loaded: LoadedScenario, repeat: int, **options: Any) -> tuple[ScenarioExploration, float, int]:
    runs = [explore_timed(loaded, **options) for _ in range(repeat)]
    counts = {(found.schedules, found.pruned, decisions) for found, _, decisions in runs}
    if len(counts) != 1:
        raise SystemExit(f"{loaded.name}: the search differed between repeats: {sorted(counts)}")
    return runs[0][0], statistics.median(seconds for _, seconds, _ in runs), runs[0][2]


def main(argv: list[str] | None = None) -> int:
    """Run the three measurements and print their tables."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--repeat", type=int, default=5, help="repeats of each timed measurement (default 5)")
    parser.add_argument("--handoffs", type=int, default=20_000, help="handoffs per ping-pong sample (default 20000)")
    parser.add_argument(
        "--naive-budget",
        type=int,
        default=200_000,
        help="schedules the naive enumeration of race_two_requests may run (default 200000)",
    )
    args = parser.parse_args(argv)
    race = _load("race_two_requests")
    print(f"exploration cost: medians of {args.repeat} repeats, Python {sys.version.split()[0]}, {os.cpu_count()} CPUs")

    print("\n(a) race_two_requests over VersionedSession")
    print(
        f"  {'granularity':<12} {'schedules':>9} {'pruned':>7} {'decisions':>9} {'seconds':>8} {'schedules/s':>12} "
        f"{'runs/s':>8}"
    )
    measured: dict[str, tuple[ScenarioExploration, float, int]] = {}
    for granularity in ("probe", "line"):
        found, seconds, decisions = _median_run(race, args.repeat, granularity=granularity, variant="VersionedSession")
        measured[granularity] = (found, seconds, decisions)
        runs = found.schedules + found.pruned
        print(
            f"  {granularity:<12} {found.schedules:>9} {found.pruned:>7} {decisions:>9} {seconds:>8.3f} "
            f"{found.schedules / seconds:>12.0f} {runs / seconds:>8.0f}"
        )

    print("\n(b) reduction against a naive enumeration (probe granularity, correct variant)")
    subject = race
    naive, naive_seconds, _ = explore_timed(race, reduction=False, max_schedules=args.naive_budget)
    timed = "one run"
    if naive.budget_hit:
        print(
            f"  race_two_requests: the naive enumeration did not finish within {args.naive_budget} schedules "
            f"({naive_seconds:.1f} s, {naive.schedules / naive_seconds:.0f} schedules/s; its naive_bound is "
            f"{naive.naive_bound}): too big for this budget, so the comparison below uses race_duplicate_delivery"
        )
        subject = _load("race_duplicate_delivery")
        naive, naive_seconds, _ = _median_run(subject, args.repeat, reduction=False)
        timed = "median"
    reduced, reduced_seconds, _ = _median_run(subject, args.repeat)
    print(f"  {'scenario':<24} {'search':<26} {'schedules':>9} {'pruned':>7} {'outcomes':>8} {'seconds':>8}")
    print(f"  {subject.name:<24} {'naive_bound (multinomial)':<26} {naive.naive_bound:>9}")
    print(
        f"  {'':<24} {'reduction off':<26} {naive.schedules:>9} {naive.pruned:>7} {naive.distinct:>8} "
        f"{naive_seconds:>8.3f}  ({timed})"
    )
    print(
        f"  {'':<24} {'DPOR + sleep sets':<26} {reduced.schedules:>9} {reduced.pruned:>7} {reduced.distinct:>8} "
        f"{reduced_seconds:>8.3f}  (median)"
    )
    print(
        f"  reduction: {naive.schedules / reduced.schedules:.0f}x fewer schedules than the naive enumeration, "
        f"{naive.naive_bound / reduced.schedules:.0f}x fewer than naive_bound; the same outcomes reached: "
        f"{'yes' if sorted(naive.outcomes) == sorted(reduced.outcomes) else 'NO'}"
    )

    print("\n(c) one scheduling step against the floor")
    floor = statistics.median(event_ping_pong(args.handoffs) for _ in range(args.repeat))
    print(f"  {'measure':<46} {'us/step':>8} {'x floor':>8}")
    print(f"  {'threading.Event ping-pong, per handoff':<46} {floor * 1e6:>8.1f} {1.0:>8.1f}")
    for granularity, (_, seconds, decisions) in measured.items():
        per_step = seconds / decisions
        label = f"explorer, {granularity}: {seconds:.3f} s / {decisions} decisions"
        print(f"  {label:<46} {per_step * 1e6:>8.1f} {per_step / floor:>8.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
