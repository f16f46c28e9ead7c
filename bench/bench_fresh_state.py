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

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.bench_charging import compare

PROGRAMS = ("scenarios/race_two_requests.py", "bench/models/fresh_state.py")
GRANULARITIES = ("probe", "line")


def main(argv: list[str] | None = None) -> int:
    """Measure, interleaved, and print one table."""
    description = __doc__.splitlines()[0] if __doc__ else None
    return compare(PROGRAMS, argv, baseline=Path("/tmp/base40s"), description=description)


if __name__ == "__main__":
    sys.exit(main())
