"""The search: which runs to make, and what they add up to.

- ``_explorer``: optimal DPOR's loop, steppable one execution at a time, over ``_tree`` (a node per decision, its
  wakeup tree and sleep set) and ``_choices`` (the policy of one run, the next branch), with ``_races`` (reversing
  each race a run shows, found with ``_conflicts``, the conflict index) and ``_exploration`` (what a search found,
  tallied alike by every strategy);
- ``_happens_before``: vector clocks, the one happens-before of the lab (the explorer's races, a run's class name,
  the atomicity check's sync order);
- ``_strategies`` and the strategies behind one interface (``_walks``: random and PCT samplers; ``_bounded``:
  preemption and delay bounding), ``_driver`` (one budget, find or prove) and ``_minimise`` (shrinking a failure);
- ``_parallel`` (the coordinator), ``_work_worker`` (a worker process), ``_work_items`` (a work item's inputs and
  result), ``_work_tally`` (their runs counted in the one-process order), ``_work_local`` (taking results in one
  process; items for other machines) and ``_subtrees`` (a work item as a line of text): the same search spread
  over processes;
- ``_atomicity``: whether the granularity was fine enough, over ``_atomicity_steps`` (what each step shared),
  ``_atomicity_epochs`` (sync epochs, windows, the sync order) and ``_atomicity_split`` (the step found).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from lab.engine.search._atomicity import AtomicityCheck, RunPart, find_split_step, run_parts
from lab.engine.search._atomicity_split import SplitStep
from lab.engine.search._exploration import DEFAULT_MAX_SCHEDULES, Execution, Exploration, NondeterminismError, tally
from lab.engine.search._explorer import Explorer
from lab.engine.search._program import Digest, Program, Ran, RunOnce
from lab.engine.search._strategies import (
    MODES,
    PORTFOLIO_ROTATION,
    STRATEGIES,
    Judge,
    SearchReport,
    Strategy,
    Systematic,
    check_strategy,
    drive,
    merge,
    minimise,
    search,
)
from lab.engine.search._subtrees import Branch, Subtree
from lab.engine.search._work_local import explore_work, split_work

if TYPE_CHECKING:
    from lab.engine.search._parallel import FORKS


def __getattr__(name: str) -> Any:
    """``FORKS`` on first use: it lives with the coordinator, whose import (``multiprocessing``'s connections,
    tens of milliseconds) only ``--jobs`` needs, and every command and worker would otherwise pay."""
    if name == "FORKS":
        from lab.engine.search._parallel import FORKS

        return FORKS
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "DEFAULT_MAX_SCHEDULES",
    "FORKS",
    "MODES",
    "PORTFOLIO_ROTATION",
    "STRATEGIES",
    "AtomicityCheck",
    "Branch",
    "Digest",
    "Execution",
    "Exploration",
    "Explorer",
    "Judge",
    "NondeterminismError",
    "Program",
    "Ran",
    "RunOnce",
    "RunPart",
    "SearchReport",
    "SplitStep",
    "Strategy",
    "Subtree",
    "Systematic",
    "check_strategy",
    "drive",
    "explore_work",
    "find_split_step",
    "merge",
    "minimise",
    "run_parts",
    "search",
    "split_work",
    "tally",
]
