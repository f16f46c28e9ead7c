"""What charging calls into unknown code costs per execution: this engine against 40b88bd, in one run.

    python bench/bench_charging.py [--baseline PATH] [--seconds S] [--repeat R]

Prints numbers; asserts nothing. Issue 21 point 1 charges a call into code the lab does not rewrite with a write of
everything it can reach (its arguments' contents, the callable's closure and bound state, its module's globals),
where the engine at 40b88bd charged what the call was handed. This bench prints, for two programs at probe and line
granularity, the CPU milliseconds per explored execution of each checkout and their ratio:

- ``scenarios/race_two_requests.py``, the shipped two-request race, whose sessions call ``json.dumps`` and the
  lab's own transport and stores (the table and the caller's word keep those precise);
- ``bench/models/unknown_calls.py``, two workers whose every step calls ``heapq.heappush`` with nested state, the
  standard library's ``textwrap.shorten``, a ``ChainMap`` subscript and ``json.dumps``: the deep charging's
  worst case among small programs.

Each sample is a whole exploration repeated for about S seconds in a fresh process of that checkout (the
executions counted, schedules plus pruned, so a difference in what was explored shows in the counts), samples of
the two checkouts interleaved so that the machine's noise hits both alike; medians of R samples are printed. Make
the baseline with ``git worktree add /tmp/base40 40b88bd`` (any other checkout measures that commit instead: the
one before the deeper charging isolates its share).
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

from bench.bench_execution import _MEASURE

PROGRAMS = ("scenarios/race_two_requests.py", "bench/models/unknown_calls.py")
GRANULARITIES = ("probe", "line")


def measure(root: Path, program: Path, granularity: str, seconds: float) -> dict[str, object]:
    """One sample: explore ``program`` (a file of this checkout's) with the code under ``root``, in a fresh process."""
    done = subprocess.run(
        [sys.executable, "-c", _MEASURE, str(root), granularity, str(seconds), str(program)],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
        env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"},
    )
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or ["no output"])[-1]
        raise SystemExit(f"measuring {program.name} with {root} at {granularity} failed: {last}")
    sample: dict[str, object] = json.loads(done.stdout.strip().splitlines()[-1])
    return sample


def compare(programs: tuple[str, ...], argv: list[str] | None, *, baseline: Path, description: str | None) -> int:
    """Measure ``programs`` (paths of this checkout's) at each granularity, this checkout and the baseline
    interleaved, and print one table (``bench/bench_fresh_state.py`` measures its own programs with it)."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--baseline", type=Path, default=baseline, help="a checkout of 40b88bd")
    parser.add_argument("--seconds", type=float, default=1.5, help="seconds of exploring per sample (default 1.5)")
    parser.add_argument("--repeat", type=int, default=3, help="samples per figure; medians printed (default 3)")
    args = parser.parse_args(argv)
    if not (args.baseline / "lab").is_dir():
        print(f"error: --baseline {args.baseline} is no checkout (git worktree add {args.baseline} 40b88bd)")
        return 2
    named = subprocess.run(
        ["git", "-C", str(args.baseline), "rev-parse", "--short=7", "HEAD"], capture_output=True, text=True, check=False
    ).stdout.strip()
    then = named or args.baseline.name
    engines = {"now": ROOT, then: args.baseline.resolve()}
    cells = [(program, granularity) for program in programs for granularity in GRANULARITIES]
    samples: dict[tuple[str, str, str], list[dict[str, object]]] = {
        (engine, program, granularity): [] for engine in engines for program, granularity in cells
    }
    for _ in range(args.repeat):
        for engine, program, granularity in samples:
            found = measure(engines[engine], ROOT / program, granularity, args.seconds)
            samples[(engine, program, granularity)].append(found)
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"CPU ms per explored execution, medians of {args.repeat} samples of {args.seconds:g} s each")
    print(f"Python {sys.version.split()[0]}, {os.cpu_count()} CPUs, load average {load:.1f}")
    print(f"  {'program':<18} {'granularity':<11} {'now':>7} {then:>8} {'ratio':>6} {'runs now/then':>14}")
    for program, granularity in cells:
        now = samples[("now", program, granularity)]
        before = samples[(then, program, granularity)]
        cpu_now = statistics.median(float(str(s["cpu_ms_per_execution"])) for s in now)
        cpu_then = statistics.median(float(str(s["cpu_ms_per_execution"])) for s in before)
        runs_now = int(str(now[0]["schedules"])) + int(str(now[0]["pruned"]))
        runs_then = int(str(before[0]["schedules"])) + int(str(before[0]["pruned"]))
        print(
            f"  {Path(program).stem:<18} {granularity:<11} {cpu_now:>7.3f} {cpu_then:>8.3f} "
            f"{cpu_now / cpu_then:>5.2f}x {f'{runs_now}/{runs_then}':>14}"
        )
    return 0


def main(argv: list[str] | None = None) -> int:
    """Measure, interleaved, and print one table."""
    description = __doc__.splitlines()[0] if __doc__ else None
    return compare(PROGRAMS, argv, baseline=Path("/tmp/base40"), description=description)


if __name__ == "__main__":
    sys.exit(main())
