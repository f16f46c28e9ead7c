"""What the reduction saves, and what identity footprints cost: schedules and milliseconds, reduced against naive.

    python bench/bench_reduction.py [--naive-budget N] [--jobs N] [--skip-naive]

Prints numbers; asserts nothing. For two problems -- the lab's two-request race (``race_two_requests``, the correct
``VersionedSession`` and the ``CheckOutsideLockSession`` mutant) and the classic check-then-act model
(``bench/models/check_then_act.py``: two workers read the version, then commit if it is unchanged; ``CheckedStore``
under one lock, ``RacyStore`` with the check outside it) -- and at probe and line granularity, it explores with the
reduction (DPOR over executed identity footprints, sleep sets) and naively (every order of the same scheduling
points, ``reduction=False``, cut at N schedules), and prints for each:

- the verdict, the schedules run (plus those cut short as sleep-set blocked);
- the schedules run until the first failing outcome was reached ("to find": a bug found in k schedules);
- then, for the check-then-act model (correct variant) and for the two-request race with 2, 3 and 4 actors (N
  requests racing on one versioned session, ``bench/models/many_requests.py``): the verdict, the executions run,
  the distinct interleaving classes and the redundant (sleep-set blocked) executions, the target (frontrun's
  executions for check-then-act: 4, 49, 1,186) and whether it was met (PASS, executions == classes, none
  redundant, within the target), and milliseconds per execution;
- last, the wall time of one 4-actor exploration (the two-request race at probe granularity) with one process and
  with ``--jobs`` (2 by default), their ratio, and whether the two records are identical (they must be);
- milliseconds per schedule (after a warm-up exploration, so the one-time rewriting of the modules under test is not
  counted), and that time as a multiple of a raw two-thread ``threading.Event`` ping-pong handoff measured in the
  same run (``bench.floor``), so that figures from a busy machine stay comparable.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.floor import event_ping_pong
from lab.engine.search import Exploration
from lab.evidence.records.exploration import exploration_record
from lab.scenarios.base import _ACTOR, actor
from lab.scenarios.exploring import explore_scenario
from lab.scenarios.loader import LoadedScenario, load
from lab.scenarios.outcomes import Grade

PROBLEMS = (
    (ROOT / "scenarios" / "race_two_requests.py", ("VersionedSession", "CheckOutsideLockSession")),
    (ROOT / "bench" / "models" / "check_then_act.py", ("CheckedStore", "RacyStore")),
)


def _first_failure(loaded: LoadedScenario) -> tuple[list[int], object]:
    """A progress callback that notes after how many schedules a failing outcome first appeared."""
    table = tuple(loaded.cls.outcomes)
    seen: set[str] = set()
    first: list[int] = []

    def progress(found: Exploration) -> None:
        if first:
            return
        for key in found.counts.keys() - seen:
            seen.add(key)
            outcome = json.loads(key)
            row = next((r for r in table if r.matches(outcome["observed"])), None)
            if outcome["broken"] or row is None or row.grade is Grade.FORBIDDEN:
                first.append(found.schedules)
                return

    return first, progress


def _against_naive(handoff: float, naive_budget: int) -> None:
    """Reduced against naive, for both problems, variants and granularities."""
    header = (
        f"{'problem':16} {'variant':24} {'gran':5} {'mode':7} {'verdict':10} {'sched':>6} {'cut':>5} "
        f"{'to find':>7} {'ms/sched':>8} {'x floor':>8}"
    )
    print(header)
    print("-" * len(header))
    for path, variants in PROBLEMS:
        loaded = load(path)
        if not isinstance(loaded, LoadedScenario):
            raise SystemExit(f"cannot load {path}: {loaded}")
        for granularity in ("probe", "line"):  # warm up: the first run rewrites the modules under test (once)
            explore_scenario(loaded, granularity=granularity, variant=variants[0], max_schedules=2)
        for variant in variants:
            for granularity in ("probe", "line"):
                for mode in ("reduced", "naive"):
                    first, progress = _first_failure(loaded)
                    begun = time.perf_counter()
                    found = explore_scenario(
                        loaded,
                        granularity=granularity,
                        variant=variant,
                        reduction=mode == "reduced",
                        progress=progress,  # type: ignore[arg-type]
                        max_schedules=naive_budget if mode == "naive" else 20_000,
                    )
                    seconds = time.perf_counter() - begun
                    runs = max(found.schedules + found.pruned, 1)
                    per = seconds / runs
                    verdict = str(found.verdict) + ("*" if found.budget_hit else "")
                    print(
                        f"{loaded.name[:16]:16} {variant[:24]:24} {granularity:5} {mode:7} {verdict:10} "
                        f"{found.schedules:6} {found.pruned:5} {first[0] if first else '-':>7} "
                        f"{per * 1e3:8.2f} {per / handoff:8.0f}",
                        flush=True,
                    )
    print("* the naive enumeration reached its budget: INCOMPLETE, not a verdict")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--naive-budget", type=int, default=3000, help="cut naive enumeration at N schedules")
    parser.add_argument("--jobs", type=int, default=2, help="processes to compare with one (default 2)")
    parser.add_argument("--skip-naive", action="store_true", help="skip the reduced-against-naive table")
    args = parser.parse_args()
    handoff = event_ping_pong(20_000)
    print(f"floor: raw threading.Event ping-pong, {handoff * 1e6:.1f} us per handoff")
    if not args.skip_naive:
        _against_naive(handoff, args.naive_budget)
        print()
    _scaling(handoff)
    _speedup(args.jobs)


def _with_actors(loaded: LoadedScenario, actors: tuple[str, ...]) -> LoadedScenario:
    """The same scenario with more of its actor methods running (the subclass stays in the model's module, so the
    model file is still the code under test)."""
    more = {name: actor(getattr(loaded.cls, name)) for name in actors if name not in loaded.cls.actors}
    cls = type(f"{loaded.cls.__name__}{len(actors)}", (loaded.cls,), {**more, "__module__": loaded.cls.__module__})
    for method in more.values():  # the class has counted its actors; unmark the base's own functions again, or
        delattr(method, _ACTOR)  # every later subclass would count them too (2 workers after 4 ran 4)
    return LoadedScenario(f"{loaded.name}_{len(actors)}", loaded.path, cls, loaded.description)


CHECK_THEN_ACT_TARGETS = {2: 4, 3: 49, 4: 1_186}
"""Executions to verify the correct check-then-act variant: what frontrun's DPOR engine needs (issue 11)."""


def _models() -> tuple[LoadedScenario, LoadedScenario]:
    loaded = []
    for path in (ROOT / "bench" / "models" / "check_then_act.py", ROOT / "bench" / "models" / "many_requests.py"):
        item = load(path)
        if not isinstance(item, LoadedScenario):
            raise SystemExit(f"cannot load {path}: {item}")
        loaded.append(item)
    return loaded[0], loaded[1]


def _scaling(handoff: float) -> None:
    """Executions as actors are added, each against its class count (optimal: equal, none redundant), and for the
    check-then-act model against frontrun's figures. A target not met is printed as such."""
    check_then_act, many = _models()
    print(
        f"{'problem':18} {'actors':>6} {'gran':5} {'verdict':10} {'executions':>10} {'classes':>7} "
        f"{'redundant':>9} {'target':>6} {'met':>4} {'ms/exec':>8} {'x floor':>8}"
    )
    cases = (
        (check_then_act, "CheckedStore", ("a", "b", "c", "d"), CHECK_THEN_ACT_TARGETS),
        (many, None, ("r1", "r2", "r3", "r4"), {}),
    )
    for base, variant, _names, _targets in cases:  # warm up: the first run rewrites the modules under test (once)
        for granularity in ("probe", "line"):
            explore_scenario(base, granularity=granularity, variant=variant, max_schedules=2)
    missed: list[str] = []
    for base, variant, names, targets in cases:
        title = "check_then_act" if targets else "race_two_requests"
        for count in (2, 3, 4):
            loaded = _with_actors(base, names[:count])
            for granularity in ("probe", "line"):
                begun = time.perf_counter()
                found = explore_scenario(loaded, granularity=granularity, variant=variant, max_schedules=20_000)
                seconds = time.perf_counter() - begun
                runs = max(found.executions, 1)
                target = targets.get(count)
                met = found.schedules == found.classes and found.blocked == 0 and found.verdict == "PASS"
                met = met and (target is None or found.executions <= target)
                if not met:
                    missed.append(f"{title} with {count} actors at {granularity}")
                print(
                    f"{title:18} {count:6} {granularity:5} {found.verdict:10} {found.executions:10} "
                    f"{found.classes:7} {found.blocked:9} {target if target is not None else '-':>6} "
                    f"{'yes' if met else 'NO':>4} {seconds / runs * 1e3:8.2f} {seconds / runs / handoff:8.0f}",
                    flush=True,
                )
    print("met: PASS, executions == classes, none redundant (and, where there is one, executions <= target)")
    print(f"targets missed: {', '.join(missed)}" if missed else "every target met")


def _speedup(jobs: int) -> None:
    """The same 4-actor exploration with jobs=1 and with ``jobs``: wall time and ratio, and the records compared."""
    _, many = _models()
    loaded = _with_actors(many, ("r1", "r2", "r3", "r4"))
    print()
    print(f"jobs: race_two_requests with 4 actors at probe granularity, jobs=1 against jobs={jobs}")
    seconds: dict[int, float] = {}
    records: dict[int, str] = {}
    for n in (1, jobs):
        begun = time.perf_counter()
        found = explore_scenario(loaded, granularity="probe", jobs=n)
        seconds[n] = time.perf_counter() - begun
        record = exploration_record(found, default_variant=True)
        record.pop("timing")
        records[n] = json.dumps(record, sort_keys=True)
        print(f"  jobs={n}: {found.verdict}, {found.executions} executions in {seconds[n]:.2f} s", flush=True)
    same = "identical" if records[1] == records[jobs] else "DIFFERENT"
    print(f"  speed-up of jobs={jobs} over jobs=1: {seconds[1] / seconds[jobs]:.2f}x (records {same})")


if __name__ == "__main__":
    main()
