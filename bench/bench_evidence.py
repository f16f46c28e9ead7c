"""Time the evidence round trip as whole processes, the way a user runs it: not a test, it prints numbers.

    python bench/bench_evidence.py [--repeat N]

Three commands, interleaved in one run so they share the machine's state: ``python -c "import rich"`` (the
baseline: an interpreter and the lab's one dependency), ``python run.py --out DIR`` (every scenario, the evidence
folder and its self-audit with re-execution), and ``python audit.py DIR`` (the full audit, re-execution included).
Each gets the median of N runs, and its ratio to the baseline. The target is under 2 s each.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TARGET_SECONDS = 2.0


def _timed(command: list[str]) -> tuple[float, int]:
    begun = time.perf_counter()
    done = subprocess.run(command, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, check=False)
    seconds = time.perf_counter() - begun
    if done.returncode not in {0, 1}:
        raise SystemExit(f"{' '.join(command)} failed with exit {done.returncode}: {done.stderr.decode()[-300:]}")
    return seconds, done.returncode


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark and print one line per command."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--repeat", type=int, default=5, help="runs of each command (default 5)")
    args = parser.parse_args(argv)
    python = sys.executable
    times: dict[str, list[float]] = {"baseline": [], "run": [], "audit": []}
    codes: dict[str, set[int]] = {"run": set(), "audit": set()}
    with tempfile.TemporaryDirectory(prefix="bench-evidence-") as tmp:
        for index in range(args.repeat):
            folder = Path(tmp) / f"ev{index}"
            times["baseline"].append(_timed([python, "-c", "import rich"])[0])
            seconds, code = _timed([python, "run.py", "--out", str(folder)])
            times["run"].append(seconds)
            codes["run"].add(code)
            seconds, code = _timed([python, "audit.py", str(folder)])
            times["audit"].append(seconds)
            codes["audit"].add(code)
        scenarios = json.loads((Path(tmp) / "ev0" / "run.json").read_text(encoding="utf-8"))["scenario_count"]
    base = statistics.median(times["baseline"])
    rows = [
        ("baseline", 'python -c "import rich"', ""),
        ("run", f"python run.py --out DIR ({scenarios} scenarios + self-audit)", f"exit {sorted(codes['run'])}"),
        ("audit", "python audit.py DIR (with re-execution)", f"exit {sorted(codes['audit'])}"),
    ]
    print(f"evidence round trip: median of {args.repeat} runs each, Python {sys.version.split()[0]}, "
          f"{os.cpu_count()} CPUs")
    for key, label, note in rows:
        median = statistics.median(times[key])
        verdict = "" if key == "baseline" else ("  under 2 s" if median < TARGET_SECONDS else "  OVER 2 s")
        print(f"  {label:<55} {median:6.3f} s  {median / base:5.1f}x baseline{verdict}  {note}".rstrip())
    return 0


if __name__ == "__main__":
    sys.exit(main())
