"""Cost of one scheduling step, as a ratio to the floor: a raw two-thread threading.Event ping-pong handoff.

    python bench/bench_scheduler.py [--steps N] [--repeat R]

Prints numbers; asserts nothing. Both are measured in the same run, several times, and the medians compared, since
these machines are shared and noisy. Target (issue 3): a switching step at most 2x the floor.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import timeit
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.floor import event_ping_pong
from lab.engine.core import DecisionPoint, Scheduler
from lab.engine.sync import LabLock
from lab.hooks import no_probe


class _Alternate:
    def choose(self, point: DecisionPoint) -> str:
        others = [name for name in point.runnable if name != point.current]
        return others[0] if others else point.runnable[0]


def lab_steps(steps: int, *, switching: bool, traced: bool) -> float:
    """Seconds per scheduling step of two actors; with ``switching`` every step hands the baton to the other.

    A step is one scheduling decision (untraced) or one trace event (traced), whichever the run made more of.
    """
    scheduler = Scheduler(policy=_Alternate() if switching else None)
    lock = LabLock(scheduler, "l")
    per_actor = steps // 2

    def body() -> None:
        if traced:
            for _ in range(per_actor // 2):  # acquire + release: two traced points
                lock.acquire()
                lock.release()
        else:
            for _ in range(per_actor):
                scheduler.point()

    scheduler.add_actor("a", body)
    scheduler.add_actor("b", body)
    result = scheduler.run()
    return result.seconds / max(len(result.decisions), len(result.trace) if traced else 0, 1)


def main() -> int:
    """Run the comparison and print a table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=20_000)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    rows = {
        "floor: raw Event ping-pong, per handoff": lambda: event_ping_pong(args.steps),
        "lab: switch at every point (untraced)": lambda: lab_steps(args.steps, switching=True, traced=False),
        "lab: switch at every point, lock ops traced": lambda: lab_steps(args.steps, switching=True, traced=True),
        "lab: no switch (keep current), lock ops traced": lambda: lab_steps(args.steps, switching=False, traced=True),
    }
    samples: dict[str, list[float]] = {name: [] for name in rows}
    for _ in range(args.repeat):  # interleave the measurements so noise hits every row alike
        for name, measure in rows.items():
            samples[name].append(measure())
    floor = statistics.median(samples[next(iter(rows))])
    print(f"{'measurement':<50} {'us/step':>9} {'x floor':>8}")
    for name in rows:
        value = statistics.median(samples[name])
        print(f"{name:<50} {value * 1e6:>9.2f} {value / floor:>8.2f}")
    print(f"(steps={args.steps}, repeat={args.repeat}, median of repeats; python {sys.version.split()[0]})")
    probe_ns = min(timeit.repeat(lambda: no_probe("commit:enter"), number=200_000, repeat=5)) / 200_000 * 1e9
    print(f"default no-op probe hook, outside any run: {probe_ns:.0f} ns per call (target: well under 1 us)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
