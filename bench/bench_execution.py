"""What one explored execution costs: milliseconds per execution of the two-request race, against the floor.

    python bench/bench_execution.py [--baseline PATH] [--seconds S] [--repeat R] [--handoffs N]

Prints numbers; asserts nothing. Targets (issue 11): at most 0.5 ms per execution at probe granularity and 1.5 ms
at line granularity, exploring ``scenarios/race_two_requests.py`` (its correct variant).

Each figure is a whole exploration repeated for about S seconds in a fresh process (the explorer's bookkeeping, the
atomicity check and the per-run setup included), divided by the executions it ran (schedules plus pruned runs);
the median of R such processes is printed. The floor is a raw two-thread ``threading.Event`` ping-pong, per
handoff; "x floor" says how many such handoffs one execution costs.

``--baseline PATH`` measures a second checkout the same way in the same run, every sample interleaved with this
one's, so that noise hits both alike: ``git worktree add /tmp/prev-engine 67071f8`` gives the engine before the
speed work. Each checkout explores its own copy of the scenario with its own code; the counts are printed so that
a difference in what was explored is seen, not hidden in a ratio.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.floor import event_ping_pong

SCENARIO = "scenarios/race_two_requests.py"
GRANULARITIES = ("probe", "line")

_MEASURE = """
import json, sys, time
from pathlib import Path
root, granularity, seconds = sys.argv[1], sys.argv[2], float(sys.argv[3])
sys.path.insert(0, root)
from lab.scenarios.exploring import explore_scenario
from lab.scenarios.loader import load
loaded = load(Path(root) / sys.argv[4])
first = explore_scenario(loaded, granularity=granularity)  # warm: imports, instrumented code, the thread pool
executions = explorations = 0
begun, cpu = time.perf_counter(), time.process_time()
while True:
    found = explore_scenario(loaded, granularity=granularity)
    executions += found.schedules + found.pruned
    explorations += 1
    elapsed = time.perf_counter() - begun
    if elapsed >= seconds:
        break
cpu = time.process_time() - cpu
print(json.dumps({
    "ms_per_execution": elapsed / executions * 1e3,
    "cpu_ms_per_execution": cpu / executions * 1e3,
    "schedules": first.schedules,
    "pruned": first.pruned,
    "verdict": str(first.verdict),
    "explorations": explorations,
}))
"""


def measure(root: Path, granularity: str, seconds: float, python: str = sys.executable) -> dict[str, object]:
    """One sample: explore the race in a fresh process of ``python`` with the code under ``root``."""
    done = subprocess.run(
        [python, "-c", _MEASURE, str(root), granularity, str(seconds), SCENARIO],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
        env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"},
    )
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or ["no output"])[-1]
        raise SystemExit(f"measuring {root} at {granularity} failed: {last}")
    sample: dict[str, object] = json.loads(done.stdout.strip().splitlines()[-1])
    return sample


def floor_seconds(handoffs: int, python: str) -> float:
    """Seconds per raw Event handoff in ``python`` (this process when it is this interpreter)."""
    if python == sys.executable:
        return event_ping_pong(handoffs)
    code = f"import sys; sys.path.insert(0, {str(ROOT)!r}); from bench.floor import event_ping_pong; "
    code += f"print(event_ping_pong({handoffs}))"
    done = subprocess.run([python, "-c", code], capture_output=True, text=True, timeout=600, check=False)
    if done.returncode != 0:
        raise SystemExit(f"measuring the floor with {python} failed: {done.stderr.strip().splitlines()[-1:]}")
    return float(done.stdout.strip().splitlines()[-1])


def main(argv: list[str] | None = None) -> int:
    """Measure, interleaved, and print one table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--baseline", type=Path, help="another checkout of the lab to measure alongside this one")
    parser.add_argument("--seconds", type=float, default=2.0, help="seconds of exploring per sample (default 2)")
    parser.add_argument("--repeat", type=int, default=3, help="samples per figure; medians printed (default 3)")
    parser.add_argument("--handoffs", type=int, default=20_000, help="handoffs per floor sample (default 20000)")
    parser.add_argument("--python", default=sys.executable, help="the interpreter to measure with (default: this one)")
    args = parser.parse_args(argv)
    if args.baseline is not None and not (args.baseline / SCENARIO).is_file():
        print(f"error: --baseline {args.baseline} holds no {SCENARIO}", file=sys.stderr)
        return 2
    engines = {"this engine": ROOT}
    if args.baseline is not None:
        engines["baseline"] = args.baseline.resolve()
    samples: dict[tuple[str, str], list[dict[str, object]]] = {
        (engine, granularity): [] for engine in engines for granularity in GRANULARITIES
    }
    floors: list[float] = []
    for _ in range(args.repeat):  # interleaved, so that the machine's noise hits every figure alike
        floors.append(floor_seconds(args.handoffs, args.python))
        for (engine, granularity), found in samples.items():
            found.append(measure(engines[engine], granularity, args.seconds, args.python))
    floor_ms = statistics.median(floors) * 1e3
    version = subprocess.run(
        [args.python, "-c", "import sys; print(sys.version.split()[0])"], capture_output=True, text=True, check=False
    ).stdout.strip()
    print(
        f"ms per execution, exploring {SCENARIO} (correct variant); medians of {args.repeat} samples of "
        f"{args.seconds:g} s each; Python {version}, {os.cpu_count()} CPUs"
    )
    print(f"floor: threading.Event ping-pong, {floor_ms * 1e3:.1f} us per handoff (Python {version})")
    print("ms/exec is wall time; cpu ms is the process's CPU time (all threads), steadier on a busy machine")
    print(
        f"  {'engine':<12} {'granularity':<11} {'ms/exec':>8} {'cpu ms':>7} {'x floor':>8} {'target':>7} "
        f"{'runs':>5} {'verdict':<10}"
    )
    medians: dict[tuple[str, str], tuple[float, float]] = {}
    for (engine, granularity), found in samples.items():
        wall = statistics.median(float(str(sample["ms_per_execution"])) for sample in found)
        cpu = statistics.median(float(str(sample.get("cpu_ms_per_execution", "nan"))) for sample in found)
        medians[(engine, granularity)] = (wall, cpu)
        first = found[0]
        runs = int(str(first["schedules"])) + int(str(first["pruned"]))
        target = {"probe": 0.5, "line": 1.5}[granularity]
        print(
            f"  {engine:<12} {granularity:<11} {wall:>8.3f} {cpu:>7.3f} {wall / floor_ms:>8.0f} {target:>7.1f} "
            f"{runs:>5} {first['verdict']!s:<10}"
        )
    if args.baseline is not None:
        for granularity in GRANULARITIES:
            (wall_before, cpu_before) = medians[("baseline", granularity)]
            (wall_now, cpu_now) = medians[("this engine", granularity)]
            print(
                f"  {granularity}: {wall_now / wall_before:.2f}x the baseline's wall time per execution, "
                f"{cpu_now / cpu_before:.2f}x its CPU time"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
