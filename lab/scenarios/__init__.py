"""Scenarios: a lesson's life, from its file to a graded run, an exploration, an explanation and a pin.

Its one job is everything done to one scenario: the format a lesson is written in (:class:`Scenario`, ``@actor``,
the :class:`Lab`, the outcome table), finding and loading scenario files (a broken file is one line, never a
traceback) and the helper modules beside them, running one schedule on the engine and grading it, exploring every
schedule that matters, explaining a counterexample, pinning one as a lesson of its own, and the mutant kill matrix.
A lesson itself imports the names it needs from :mod:`lab`; the rest of this face serves the commands and the
evidence.
"""

from __future__ import annotations

from lab.scenarios.base import Lab, Pin, Scenario, actor
from lab.scenarios.compiled import compile_ahead
from lab.scenarios.cross_check import (
    SWITCH_INTERVAL,
    CheckedExploration,
    CrossCheck,
    check_exploration,
    cross_check,
    outcome_matches,
)
from lab.scenarios.executed import executed_files
from lab.scenarios.explaining import Explanation, explain_failure, replay_command
from lab.scenarios.exploring import (
    ExploreVerdict,
    ScenarioExploration,
    explore_scenario,
    failure_reason,
    replay_scenario,
    run_failure,
)
from lab.scenarios.helper_modules import helper_modules, helper_name, helper_stems
from lab.scenarios.kill_matrix import CellStatus, KillCell, KillMatrix, build_kill_matrix, race_scenario
from lab.scenarios.loader import BrokenScenario, LoadedScenario, discover, load, load_all
from lab.scenarios.outcomes import (
    FAILING_GRADES,
    UNDECLARED,
    Grade,
    Outcome,
    acceptable,
    chat_state,
    forbidden,
    interesting,
    only,
    row_for,
    versioned_state,
)
from lab.scenarios.pinning import describe_pin, is_pinned, pinned_scenario, save_counterexample
from lab.scenarios.probe_points import TRANSPORT_MODULES, points_in_file
from lab.scenarios.results import NOT_RUN
from lab.scenarios.runner import GRANULARITIES, Check, ScenarioResult, Verdict, run_scenario
from lab.scenarios.template import check_new_name, write_template
from lab.scenarios.under_test import DEFAULT_MODULES

__all__ = [
    "DEFAULT_MODULES",
    "FAILING_GRADES",
    "GRANULARITIES",
    "NOT_RUN",
    "SWITCH_INTERVAL",
    "TRANSPORT_MODULES",
    "UNDECLARED",
    "BrokenScenario",
    "CellStatus",
    "Check",
    "CheckedExploration",
    "CrossCheck",
    "Explanation",
    "ExploreVerdict",
    "Grade",
    "KillCell",
    "KillMatrix",
    "Lab",
    "LoadedScenario",
    "Outcome",
    "Pin",
    "Scenario",
    "ScenarioExploration",
    "ScenarioResult",
    "Verdict",
    "acceptable",
    "actor",
    "build_kill_matrix",
    "chat_state",
    "check_exploration",
    "check_new_name",
    "compile_ahead",
    "cross_check",
    "describe_pin",
    "discover",
    "executed_files",
    "explain_failure",
    "explore_scenario",
    "failure_reason",
    "forbidden",
    "helper_modules",
    "helper_name",
    "helper_stems",
    "interesting",
    "is_pinned",
    "load",
    "load_all",
    "only",
    "outcome_matches",
    "pinned_scenario",
    "points_in_file",
    "race_scenario",
    "replay_command",
    "replay_scenario",
    "row_for",
    "run_failure",
    "run_scenario",
    "save_counterexample",
    "versioned_state",
    "write_template",
]
