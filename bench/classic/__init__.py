"""Classic concurrency bugs, ported to Python threads: the benchmark behind ``bench/bench_classic.py``.

Each module is one small program in the spirit of SCTBench's "CS" set (Thomson, Donaldson and Betts, 2016; the
originals come from the ESBMC and Inspect benchmarks), written anew for this project with the originals' thread
counts and loop bounds: pthread mutexes are ``threading.Lock``, condition variables ``threading.Condition``, asserts
``raise AssertionError``. A module exposes ``BUGGY``, ``THREADS``, ``setup(lab)``, ``ACTORS`` (one function per
thread, named ``t1``, ``t2``, ...) and ``check(state)``; a module whose docstring says "uncertain" is faithful to the
original in spirit, not line by line.
"""

from __future__ import annotations

PROGRAMS = [
    "account_bad",
    "bluetooth_driver_bad",
    "carter01_bad",
    "circular_buffer_bad",
    "deadlock01_bad",
    "din_phil2_sat",
    "din_phil3_sat",
    "din_phil5_sat",
    "fsbench_bad",
    "lazy01_bad",
    "phase01_bad",
    "queue_bad",
    "reorder_3_bad",
    "reorder_4_bad",
    "reorder_5_bad",
    "reorder_10_bad",
    "reorder_20_bad",
    "stack_bad",
    "stateful01_bad",
    "sync01_bad",
    "sync02_bad",
    "token_ring_bad",
    "twostage_bad",
    "twostage_100_bad",
    "wronglock_bad",
    "wronglock_3_bad",
    # the correct ones
    "account",
    "deadlock01",
    "din_phil3",
    "stack",
    "stateful01",
    "sync01",
    "wronglock",
]
"""Every program, the buggy ones first, as module names under ``bench.classic``."""
