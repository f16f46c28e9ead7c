"""What fresh per-execution state costs per execution: this engine against 40b88bd, in one run.

    python bench/bench_fresh_state.py [--baseline PATH] [--seconds S] [--repeat R]

Prints numbers; asserts nothing. Issue 21 point 3 makes every execution a fresh program: each actor's body runs in
a new ``contextvars.Context``, a pooled thread drops the thread-local shares an execution added, a thread-local or
a ``ContextVar`` is labelled per actor, and in a run that labelled a mortal object (a finalizer, a weak container,
an object something refers to weakly) the recording lets go, at every scheduling point, of what only it still holds
(``lab.engine.record._mortal``). Point 2 adds the sleep model's gate and the virtual selector. This bench prints,
for two programs at probe and line granularity, the CPU milliseconds per explored execution of each checkout and
their ratio:

- ``scenarios/race_two_requests.py``, the shipped two-request race: no mortal object, so it pays only for the
  fresh context and thread state (its executions must not grow);
- ``bench/models/fresh_state.py``: two workers using a thread-local, a ContextVar, a weak cache, a finalizer and
  a dict dropped at run time (the sweep runs at every scheduling point, and lets go of the dict).

Samples as in ``bench/bench_charging.py`` (each a whole exploration repeated for about S seconds in a fresh process
of that checkout, the two checkouts interleaved, medians of R samples). Make the baseline with
``git worktree add /tmp/base40s 40b88bd``. The baseline may explore the second program differently (it kept the
dict, and the finalizer, alive): the runs column says so.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.bench_charging import measure

PROGRAMS = ("scenarios/race_two_requests.py", "bench/models/fresh_state.py")
GRANULARITIES = ("probe", "line")


def main(argv: list[str] | None = None) -> int:
    """Measure, interleaved, and print one table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--baseline", type=Path, default=Path("/tmp/base40s"), help="a checkout of 40b88bd")
    parser.add_argument("--seconds", type=float, default=1.5, help="seconds of exploring per sample (default 1.5)")
    parser.add_argument("--repeat", type=int, default=3, help="samples per figure; medians printed (default 3)")
    args = parser.parse_args(argv)
    if not (args.baseline / "lab").is_dir():
        print(f"error: --baseline {args.baseline} is no checkout (git worktree add {args.baseline} 40b88bd)")
        return 2
    engines = {"now": ROOT, "40b88bd": args.baseline.resolve()}
    cells = [(program, granularity) for program in PROGRAMS for granularity in GRANULARITIES]
    samples: dict[tuple[str, str, str], list[dict[str, object]]] = {
        (engine, program, granularity): [] for engine in engines for program, granularity in cells
    }
    for _ in range(args.repeat):
        for engine, program, granularity in samples:
            samples[(engine, program, granularity)].append(
                measure(engines[engine], ROOT / program, granularity, args.seconds)
            )
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"CPU ms per explored execution, medians of {args.repeat} samples of {args.seconds:g} s each")
    print(f"Python {sys.version.split()[0]}, {os.cpu_count()} CPUs, load average {load:.1f}")
    print(f"  {'program':<18} {'granularity':<11} {'now':>7} {'40b88bd':>8} {'ratio':>6} {'runs now/then':>14}")
    for program, granularity in cells:
        now = samples[("now", program, granularity)]
        then = samples[("40b88bd", program, granularity)]
        cpu_now = statistics.median(float(str(s["cpu_ms_per_execution"])) for s in now)
        cpu_then = statistics.median(float(str(s["cpu_ms_per_execution"])) for s in then)
        runs_now = int(str(now[0]["schedules"])) + int(str(now[0]["pruned"]))
        runs_then = int(str(then[0]["schedules"])) + int(str(then[0]["pruned"]))
        print(
            f"  {Path(program).stem:<18} {granularity:<11} {cpu_now:>7.3f} {cpu_then:>8.3f} "
            f"{cpu_now / cpu_then:>5.2f}x {f'{runs_now}/{runs_then}':>14}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
