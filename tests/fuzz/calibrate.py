"""Measure how many scheduling points each step of the grammar adds, at line and at instruction granularity, and
print :data:`tests.fuzz.grammar.POINTS` (``python -m tests.fuzz.calibrate``, from the checkout).

Each step runs alone in actor ``a`` of a two-actor program (``b`` is empty) under the default policy; its points are
``a``'s scheduling points less those of an empty actor. A guard is measured around ``local``, less ``local``'s.
"""

from __future__ import annotations

import itertools
import sys

from lab.scenarios.loader import LoadedScenario, load
from tests.fuzz.grammar import STEPS
from tests.fuzz.programs import Program, Step, source
from tests.fuzz.running import _home, measured_points

_serial = itertools.count()


def measure(program: Program, granularity: str) -> int:
    path = _home() / f"calibrate_{next(_serial)}.py"  # never a path loaded before (see running.explore_both)
    path.write_text(source(program), encoding="utf-8")
    loaded = load(path)
    assert isinstance(loaded, LoadedScenario), loaded
    try:
        return measured_points(loaded, granularity)[0]
    finally:
        sys.modules.pop(loaded.cls.__module__, None)


def main() -> None:
    found: dict[str, tuple[int, ...]] = {}
    base = {g: measure(Program(((), ())), g) for g in ("line", "instruction")}
    local = {g: measure(Program(((Step("local"),), ())), g) - base[g] for g in base}
    print(f"# base points of an empty actor: {base}", file=sys.stderr)
    for kind, step in STEPS.items():
        made = Step(kind, 1, (Step("local"),)) if step.guard else Step(kind, 1)
        less = local if step.guard else dict.fromkeys(base, 0)
        found[kind] = tuple(max(measure(Program(((made,), ())), g) - base[g] - less[g], 0) for g in base)
    print("POINTS: dict[str, tuple[int, int]] = {")
    for kind, pair in found.items():
        print(f'    "{kind}": {pair},')
    print("}")


if __name__ == "__main__":
    main()
