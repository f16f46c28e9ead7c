"""The engine's figures for issue 22 in one run: one table, each figure with its target and whether it is met.

    python bench/bench_engine.py [--baseline PATH] [--seconds S] [--runs N] [--rounds R]

Prints numbers; asserts nothing. It calls the single-purpose benches rather than repeating them:
(a) ``bench_locks``: the correct check-then-act store on a plain ``threading.Lock`` and on the lab's lock, and the
lab's time to a verdict on the 4-worker store (plain lock, probe and line granularity, best of three) against
frontrun's exhaustive DPOR (:func:`bench.classic.peers.frontrun_store`), run in a subprocess of the peers venv:
``$LAB_PEERS_VENV``, else ``/work/bench-venv``; make it with ``python3 -m venv /work/bench-venv &&
/work/bench-venv/bin/pip install -e . frontrun`` (frontrun is never a dependency of the lab; without the venv the
rows say ``skip`` and a note says how to make it); (b) the N-request race (``bench/models/many_requests.py``):
executions and classes for 2 / 3 / 4 requests; (c) ``bench_jobs``: ``--jobs 2`` against ``--jobs 1`` on the
4-request race, R rounds alternating, medians; (d) ``bench_recording``: a recorded run of the 2-request race against
an unrecorded one; (e) ``bench_execution``: milliseconds per execution at probe and line granularity against a
checkout of the commit the issue began at (``git worktree add /work/wt/base 40b88bd``), measured interleaved in the
same run. Every ratio is against a baseline measured in this run; the machine is shared, so the load average is
printed before and after.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import textwrap
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench import bench_execution, bench_jobs, bench_locks, bench_recording
from bench.bench_reduction import _with_actors
from lab.engine.core import collector_relaxed
from lab.scenarios.exploring import explore_scenario

LAB_LOCK_EXECUTIONS = {2: 4, 3: 30, 4: 360}
RACE_EXECUTIONS = {2: 6, 3: 90, 4: 2_520}
DEFAULT_PEER_VENV = Path("/work/bench-venv")

Row = tuple[str, str, str, str]


def _locks(rows: list[Row]) -> dict[str, tuple[float, int]]:
    """(a): executions on both locks for 2 / 3 / 4 workers; returns the plain lock's seconds to a verdict on 4
    workers and its executions, at probe and at line granularity (the store users write, as frontrun runs it)."""
    models = [(title, bench_locks._load(path)) for title, path in bench_locks.LOCKS]
    for _title, loaded in models:
        for granularity in ("probe", "line"):
            explore_scenario(loaded, granularity=granularity, variant="CheckedStore", max_schedules=2)
    for workers in (2, 3, 4):
        counts: list[int] = []
        for _title, loaded in models:
            found, _seconds = bench_locks._timed(
                _with_actors(loaded, bench_locks.WORKERS[:workers]), "CheckedStore", "probe"
            )
            counts.append(found.executions)
        lab, plain = counts
        met = plain <= lab <= LAB_LOCK_EXECUTIONS[workers]
        rows.append(
            (
                f"a lock execs, {workers} workers",
                f"{plain} / lab {lab}",
                f"<= {LAB_LOCK_EXECUTIONS[workers]}",
                "yes" if met else "NO",
            )
        )
    plain_store = _with_actors(models[1][1], bench_locks.WORKERS)
    timed: dict[str, tuple[float, int]] = {}
    for granularity in ("probe", "line"):  # the best of three: the machine is shared
        runs = [bench_locks._timed(plain_store, "CheckedStore", granularity) for _ in range(3)]
        timed[granularity] = (min(seconds for _, seconds in runs), runs[0][0].executions)
    return timed


def peer_venv() -> Path:
    """The venv that holds frontrun beside the lab: ``$LAB_PEERS_VENV``, else ``/work/bench-venv``."""
    return Path(os.environ.get("LAB_PEERS_VENV") or DEFAULT_PEER_VENV)


def _frontrun(rows: list[Row], lab: dict[str, tuple[float, int]]) -> str:
    """(a): the lab's time to a verdict on the 4-worker store against frontrun's, or a note why not and how."""
    venv = peer_venv()
    python = venv / "bin" / "python"
    if not python.is_file():
        for granularity, (seconds, _executions) in lab.items():
            rows.append((f"a lab / frontrun s, 4 wk {granularity}", f"lab {seconds:.2f} s", "< 1", "skip"))
        return (
            f"(a) frontrun skipped: no {python}. Make it: python3 -m venv {venv} && {venv}/bin/pip install -e "
            f"{ROOT} frontrun (or set LAB_PEERS_VENV to a venv that has both)"
        )
    code = (
        f"import json, sys; sys.path.insert(0, {str(ROOT)!r})\n"
        "from bench.classic.peers import frontrun_store\n"
        "found = frontrun_store(4)\n"
        "print(json.dumps([found.verdict, found.executions, found.seconds, found.detail]))\n"
    )
    done = subprocess.run([str(python), "-c", code], capture_output=True, text=True, timeout=900, check=False)
    if done.returncode != 0:
        for granularity, (seconds, _executions) in lab.items():
            rows.append((f"a lab / frontrun s, 4 wk {granularity}", f"lab {seconds:.2f} s", "< 1", "skip"))
        last = (done.stderr.strip().splitlines() or ["no output"])[-1]
        return f"(a) frontrun failed in {venv}: {last}"
    verdict, executions, peer, detail = json.loads(done.stdout.strip().splitlines()[-1])
    if verdict != "PASS":
        return f"(a) frontrun gave {verdict} ({detail}) on the correct store: no time to a verdict to compare"
    for granularity, (seconds, _executions) in lab.items():
        ratio = seconds / peer
        rows.append((f"a lab / frontrun s, 4 wk {granularity}", f"{ratio:.2f}x", "< 1", "yes" if ratio < 1 else "NO"))
    took = ", ".join(
        f"{granularity} {seconds:.2f} s ({runs} executions)" for granularity, (seconds, runs) in lab.items()
    )
    return (
        f"(a) 4-worker store on a threading.Lock, time to a verdict: lab {took}; "
        f"frontrun DPOR {peer:.2f} s ({executions} executions, no preemption bound)"
    )


def _race(rows: list[Row]) -> None:
    """(b): executions and classes of the N-request race, which must stay at 6 / 90 / 2,520 each."""
    for actors in (2, 3, 4):
        found = explore_scenario(bench_jobs._race(actors), granularity="probe", max_schedules=20_000)
        want = RACE_EXECUTIONS[actors]
        met = found.executions == found.classes == want and found.verdict == "PASS"
        rows.append(
            (
                f"b race execs/classes, {actors} req",
                f"{found.executions} / {found.classes}",
                f"= {want:,}",
                "yes" if met else "NO",
            )
        )


def _jobs(rows: list[Row], rounds: int) -> str:
    """(c): ``rounds`` rounds of jobs=1 against jobs=2 on the 4-request race, alternating: the median wall ratio, the
    median CPU bound, whether every pair of records is identical; the note gives each round and the load."""
    loaded = bench_jobs._race(4)
    explore_scenario(loaded, granularity="probe", max_schedules=2)
    ratios: list[float] = []
    bounds: list[float] = []
    same = True
    cores = min(2, os.cpu_count() or 1)
    for _ in range(rounds):
        alone, cpu, _, record_alone, _ = bench_jobs._once(loaded, "probe", 1)
        shared, coordinator, workers, record_shared, _ = bench_jobs._once(loaded, "probe", 2)
        ratios.append(alone / shared)
        bounds.append(cores * cpu / (coordinator + workers))
        same = same and record_alone == record_shared
    ratio, bound = statistics.median(ratios), statistics.median(bounds)
    target = f">= {bench_jobs.TARGET}x"
    rows.append(("c jobs 2 wall speed-up", f"{ratio:.2f}x", target, "yes" if ratio >= bench_jobs.TARGET else "NO"))
    rows.append(("c jobs 2 CPU bound", f"{bound:.2f}x", target, "yes" if bound >= bench_jobs.TARGET else "NO"))
    rows.append(("c jobs 2 records", "identical" if same else "DIFFERENT", "identical", "yes" if same else "NO"))
    each = ", ".join(f"{r:.2f}x" for r in ratios)
    return f"(c) wall speed-up of each round: {each} (medians above; load {os.getloadavg()[0]:.2f} after them)"


def _recording(rows: list[Row], runs: int) -> None:
    """(d): CPU per recorded run over CPU per unrecorded run, lowest of three interleaved rounds."""
    loaded = bench_jobs._race(2)
    best: dict[bool, float] = {}
    with collector_relaxed():
        for recorded in (False, True):
            bench_recording.per_run(loaded, "probe", recorded, 20)
        for _ in range(3):
            for recorded in (False, True):
                cost = bench_recording.per_run(loaded, "probe", recorded, runs)
                best[recorded] = min(cost, best.get(recorded, cost))
    ratio = best[True] / best[False]
    met = ratio <= bench_recording.TARGET
    rows.append(
        ("d recorded / unrecorded run", f"{ratio:.2f}x", f"<= {bench_recording.TARGET:g}x", "yes" if met else "NO")
    )


def _execution(rows: list[Row], baseline: Path | None, seconds: float) -> str:
    """(e): ms per execution now over ms per execution at the baseline, interleaved, medians of three."""
    if baseline is None or not (baseline / bench_execution.SCENARIO).is_file():
        return f"(e) skipped: no baseline checkout at {baseline} (git worktree add /work/wt/base 40b88bd)"
    notes = []
    for granularity in bench_execution.GRANULARITIES:
        now: list[float] = []
        before: list[float] = []
        for _ in range(3):
            now.append(float(str(bench_execution.measure(ROOT, granularity, seconds)["cpu_ms_per_execution"])))
            before.append(float(str(bench_execution.measure(baseline, granularity, seconds)["cpu_ms_per_execution"])))
        ratio = statistics.median(now) / statistics.median(before)
        rows.append((f"e ms/exec {granularity} vs 40b88bd", f"{ratio:.2f}x", "<= 1x", "yes" if ratio <= 1 else "NO"))
        notes.append(f"{granularity} {statistics.median(now):.3f} against {statistics.median(before):.3f} ms")
    return "(e) CPU ms per execution, this engine against 40b88bd: " + "; ".join(notes)


def main(argv: list[str] | None = None) -> int:
    """Measure every figure and print one table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--baseline", type=Path, default=Path("/work/wt/base"), help="checkout of 40b88bd")
    parser.add_argument("--seconds", type=float, default=2.0, help="seconds per execution sample (default 2)")
    parser.add_argument("--runs", type=int, default=200, help="runs per recording round (default 200)")
    parser.add_argument("--rounds", type=int, default=3, help="rounds of the --jobs comparison (default 3)")
    args = parser.parse_args(argv)
    if args.seconds <= 0 or args.runs < 1 or args.rounds < 1:
        print("error: --seconds must be positive, --runs and --rounds at least 1", file=sys.stderr)
        return 2
    load_before, begun = os.getloadavg(), time.perf_counter()
    rows: list[Row] = []
    notes = [_frontrun(rows, _locks(rows))]
    _race(rows)
    notes.append(_jobs(rows, args.rounds))
    _recording(rows, args.runs)
    notes.append(_execution(rows, args.baseline, args.seconds))
    load_after = os.getloadavg()
    print(f"issue 22, engine figures; Python {sys.version.split()[0]}, {os.cpu_count()} CPUs")
    print(
        f"load average (1/5/15 min): {'/'.join(f'{x:.2f}' for x in load_before)} before, "
        f"{'/'.join(f'{x:.2f}' for x in load_after)} after; {time.perf_counter() - begun:.0f} s"
    )
    print(f"{'figure':36} {'got':>18} {'target':>10} {'met':>4}")
    print("-" * 71)
    for figure, got, target, met in rows:
        print(f"{figure:36} {got:>18} {target:>10} {met:>4}")
    for note in notes:
        if note:
            print(textwrap.fill(note, width=80, subsequent_indent="    ", break_on_hyphens=False))
    return 0


if __name__ == "__main__":
    sys.exit(main())
