"""Time the evidence round trip as whole processes, the way a user runs it: not a test, it prints numbers.

    python bench/bench_evidence.py [--repeat N]

Four commands, interleaved in one run so they share the machine's state: ``python -c "import rich"`` (the
baseline: an interpreter and the lab's one dependency), ``python run.py --out DIR`` (every scenario, the evidence
folder and its self-audit with re-execution), ``python audit.py DIR`` (the full audit, re-execution with this
checkout's code included) and ``python audit.py DIR --execute-archive`` (re-executing the archived copy, contained).
Each gets the median of N runs, and its ratio to the baseline. The target is under 1 s each (issues 10 and 23).

The commands run as a user's do: Python's bytecode cache of the checkout is written first (``compileall``, into
the ``__pycache__`` folders git ignores), and the commands get the environment without ``PYTHONDONTWRITEBYTECODE``
(set on some machines, it would make every command compile the lab from source, which no user's second run
does; ``import rich`` reads the cache pip wrote for it). The line of each command says so.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TARGET_SECONDS = 1.0


ENVIRONMENT = {name: value for name, value in os.environ.items() if name != "PYTHONDONTWRITEBYTECODE"}


CPU: dict[str, list[float]] = {}
"""Processor seconds (user and system, the command's every process) of each run, by command: on a machine others
share, the wall-clock time says how busy it was, these say what the command costs."""


def _timed(command: list[str], key: str = "") -> tuple[float, int]:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    begun = time.perf_counter()
    done = subprocess.run(
        command, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, check=False, env=ENVIRONMENT
    )
    seconds = time.perf_counter() - begun
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
    CPU.setdefault(key, []).append(cpu)
    if done.returncode not in {0, 1}:
        raise SystemExit(f"{' '.join(command)} failed with exit {done.returncode}: {done.stderr.decode()[-300:]}")
    return seconds, done.returncode


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark and print one line per command."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--repeat", type=int, default=5, help="runs of each command (default 5)")
    args = parser.parse_args(argv)
    python = sys.executable
    load = os.getloadavg()[0]
    times: dict[str, list[float]] = {"baseline": [], "run": [], "audit": [], "archive": []}
    codes: dict[str, set[int]] = {"run": set(), "audit": set(), "archive": set()}
    cached = subprocess.run(
        [python, "-m", "compileall", "-q", "lab", "scenarios", "run.py", "audit.py"],
        cwd=ROOT,
        env=ENVIRONMENT,
        stdout=subprocess.DEVNULL,
        check=False,
    )
    with tempfile.TemporaryDirectory(prefix="bench-evidence-") as tmp:
        for index in range(args.repeat):
            folder = Path(tmp) / f"ev{index}"
            times["baseline"].append(_timed([python, "-c", "import rich"], "baseline")[0])
            seconds, code = _timed([python, "run.py", "--out", str(folder)], "run")
            times["run"].append(seconds)
            codes["run"].add(code)
            seconds, code = _timed([python, "audit.py", str(folder)], "audit")
            times["audit"].append(seconds)
            codes["audit"].add(code)
            seconds, code = _timed([python, "audit.py", str(folder), "--execute-archive"], "archive")
            times["archive"].append(seconds)
            codes["archive"].add(code)
        scenarios = json.loads((Path(tmp) / "ev0" / "run.json").read_text(encoding="utf-8"))["scenario_count"]
    base = statistics.median(times["baseline"])
    rows = [
        ("baseline", 'python -c "import rich"', ""),
        ("run", f"python run.py --out DIR ({scenarios} scenarios + self-audit)", f"exit {sorted(codes['run'])}"),
        ("audit", "python audit.py DIR (with re-execution)", f"exit {sorted(codes['audit'])}"),
        ("archive", "python audit.py DIR --execute-archive", f"exit {sorted(codes['archive'])}"),
    ]
    print(
        f"evidence round trip: median of {args.repeat} runs each, Python {sys.version.split()[0]}, "
        f"{os.cpu_count()} CPUs, load {load:.1f}; bytecode cache "
        f"{'written first' if cached.returncode == 0 else 'NOT written (compileall failed)'}; load at the end "
        f"{os.getloadavg()[0]:.1f}"
    )
    for key, label, note in rows:
        median = statistics.median(times[key])
        verdict = (
            ""
            if key == "baseline"
            else (f"  under {TARGET_SECONDS:g} s" if median < TARGET_SECONDS else f"  OVER {TARGET_SECONDS:g} s")
        )
        cpu = statistics.median(CPU[key])
        print(
            f"  {label:<55} {median:6.3f} s  {median / base:5.1f}x baseline  cpu {cpu:5.2f} s{verdict}  {note}".rstrip()
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
