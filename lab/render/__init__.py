"""Terminal rendering with rich: the edge of the lab, fed only by plain result data.

Every summary is a table where it fits the width it is printed at (a terminal's, ``COLUMNS``, or 80 in a pipe),
and one item per line where it does not: a table squeezed below its natural width would give a column no width,
cut a name or split a word, and a person reading a CI log at 80 columns deserves better.
"""

from __future__ import annotations

from lab.render.commands import Invocation
from lab.render.exploration import (
    exploration_table,
    kill_matrix_table,
    naive_text,
    outcome_rows_table,
    print_counterexample,
    print_explanation,
)
from lab.render.fitting import Hanging, verdict_text
from lab.render.replay import replay_table
from lab.render.scenarios import list_table, print_failures, summary_table

__all__ = [
    "Hanging",
    "Invocation",
    "exploration_table",
    "kill_matrix_table",
    "list_table",
    "naive_text",
    "outcome_rows_table",
    "print_counterexample",
    "print_explanation",
    "print_failures",
    "replay_table",
    "summary_table",
    "verdict_text",
]
