"""What the reduction saves, and what identity footprints cost: schedules and milliseconds, reduced against naive.

    python bench/bench_reduction.py [--naive-budget N]

Prints numbers; asserts nothing. For two problems -- the lab's two-request race (``race_two_requests``, the correct
``VersionedSession`` and the ``CheckOutsideLockSession`` mutant) and the classic check-then-act model
(``bench/models/check_then_act.py``: two workers read the version, then commit if it is unchanged; ``CheckedStore``
under one lock, ``RacyStore`` with the check outside it) -- and at probe and line granularity, it explores with the
reduction (DPOR over executed identity footprints, sleep sets) and naively (every order of the same scheduling
points, ``reduction=False``, cut at N schedules), and prints for each:

- the verdict, the schedules run (plus those cut short as sleep-set blocked);
- the schedules run until the first failing outcome was reached ("to find": a bug found in k schedules);
- then, for the check-then-act model and for N requests racing on one versioned session
  (``bench/models/many_requests.py``) with 2, 3 and 4 actors: the executions an exploration needs, which must equal
  the number of classes of equivalent interleavings (none cut short), and milliseconds per execution;
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
from lab.engine.explorer import Exploration
from lab.scenarios.base import actor
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--naive-budget", type=int, default=3000, help="cut naive enumeration at N schedules")
    args = parser.parse_args()
    handoff = event_ping_pong(20_000)
    print(f"floor: raw threading.Event ping-pong, {handoff * 1e6:.1f} us per handoff")
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
                        max_schedules=args.naive_budget if mode == "naive" else 20_000,
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
    print()
    _scaling(handoff)


def _with_actors(loaded: LoadedScenario, actors: tuple[str, ...]) -> LoadedScenario:
    """The same scenario with more of its actor methods running (the subclass stays in the model's module, so the
    model file is still the code under test)."""
    more = {name: actor(getattr(loaded.cls, name)) for name in actors if name not in loaded.cls.actors}
    cls = type(f"{loaded.cls.__name__}{len(actors)}", (loaded.cls,), {**more, "__module__": loaded.cls.__module__})
    return LoadedScenario(f"{loaded.name}_{len(actors)}", loaded.path, cls, loaded.description)


def _scaling(handoff: float) -> None:
    """Executions as actors are added: each must equal the number of interleaving classes (nothing cut short)."""
    print(
        f"{'problem':18} {'actors':>6} {'gran':5} {'verdict':10} {'executions':>10} {'cut':>5} "
        f"{'ms/exec':>8} {'x floor':>8}"
    )
    cases = (
        (ROOT / "bench" / "models" / "check_then_act.py", "CheckedStore", ("a", "b", "c", "d")),
        (ROOT / "bench" / "models" / "many_requests.py", None, ("r1", "r2", "r3", "r4")),
    )
    for path, variant, names in cases:
        base = load(path)
        if not isinstance(base, LoadedScenario):
            raise SystemExit(f"cannot load {path}: {base}")
        for count in (2, 3, 4):
            loaded = _with_actors(base, names[:count])
            for granularity in ("probe", "line"):
                begun = time.perf_counter()
                found = explore_scenario(loaded, granularity=granularity, variant=variant, max_schedules=20_000)
                seconds = time.perf_counter() - begun
                runs = max(found.schedules + found.pruned, 1)
                print(
                    f"{base.name[:18]:18} {count:6} {granularity:5} {found.verdict:10} {found.schedules:10} "
                    f"{found.pruned:5} {seconds / runs * 1e3:8.2f} {seconds / runs / handoff:8.0f}",
                    flush=True,
                )


if __name__ == "__main__":
    main()
