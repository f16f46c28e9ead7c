"""A plain ``threading.Lock`` against the lab's own lock: executions and time to a verdict, one model for both.

    python bench/bench_locks.py [--granularity probe|line|both]

Prints numbers; asserts nothing. The correct check-then-act store (``CheckedStore``: the version check and the
write under one lock) with 2, 3 and 4 workers, once on the lab's lock (``bench/models/check_then_act.py``,
``self.lab.lock(...)``) and once on the lock users write (``bench/models/check_then_act_threading.py``,
``threading.Lock()``, which the lab replaces with its stand-in). Both are one model
(:mod:`lab.engine.sync._lock`), so the executions must be equal: 4 / 30 / 360 (before the model was shared, the
plain lock needed 8 / 140 / 3,930). Then the racy twin (``RacyStore``, the check outside the lock) with 2 workers,
which must FAIL on both. Time to a verdict is wall time of one exploration after a warm-up (the one-time rewriting
of the modules under test is not counted); the last column is the plain lock's time as a multiple of the lab lock's
in the same run.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.bench_reduction import _with_actors
from lab.scenarios.exploring import ScenarioExploration, explore_scenario
from lab.scenarios.loader import LoadedScenario, load

LOCKS = (
    ("lab lock", ROOT / "bench" / "models" / "check_then_act.py"),
    ("threading.Lock", ROOT / "bench" / "models" / "check_then_act_threading.py"),
)
WORKERS = ("a", "b", "c", "d")


def _load(path: Path) -> LoadedScenario:
    loaded = load(path)
    if not isinstance(loaded, LoadedScenario):
        raise SystemExit(f"cannot load {path}: {loaded}")
    return loaded


def _timed(loaded: LoadedScenario, variant: str, granularity: str) -> tuple[ScenarioExploration, float]:
    begun = time.perf_counter()
    found = explore_scenario(loaded, granularity=granularity, variant=variant, max_schedules=20_000)
    return found, time.perf_counter() - begun


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--granularity", choices=("probe", "line", "both"), default="both")
    args = parser.parse_args()
    granularities = ("probe", "line") if args.granularity == "both" else (args.granularity,)
    models = [(title, _load(path)) for title, path in LOCKS]
    for _title, loaded in models:  # warm up: the first run rewrites the modules under test (once)
        for granularity in granularities:
            explore_scenario(loaded, granularity=granularity, variant="CheckedStore", max_schedules=2)
    header = (
        f"{'store':12} {'workers':>7} {'gran':5} {'lock':15} {'verdict':10} {'executions':>10} "
        f"{'ms to verdict':>13} {'x lab':>6}"
    )
    print(header)
    print("-" * len(header))
    unequal: list[str] = []
    cases = [("CheckedStore", n) for n in (2, 3, 4)] + [("RacyStore", 2)]
    for variant, workers in cases:
        for granularity in granularities:
            executions: list[int] = []
            baseline = 0.0
            for title, loaded in models:
                found, seconds = _timed(_with_actors(loaded, WORKERS[:workers]), variant, granularity)
                executions.append(found.executions)
                baseline = baseline or seconds
                print(
                    f"{variant:12} {workers:7} {granularity:5} {title:15} {found.verdict:10} {found.executions:10} "
                    f"{seconds * 1e3:13.1f} {seconds / baseline:6.2f}",
                    flush=True,
                )
            if variant == "CheckedStore" and executions[1] > executions[0]:
                unequal.append(f"{workers} workers at {granularity}: {executions[1]} against {executions[0]}")
    print("target: a threading.Lock needs no more executions than the lab's lock (4 / 30 / 360 for 2 / 3 / 4)")
    print(f"MISSED: {'; '.join(unequal)}" if unequal else "met at every size and granularity")


if __name__ == "__main__":
    main()
