"""Recording: the modules under test rewritten so that every access to shared state is reported as it happens.

Behind this face, one job a module:

- rewriting: ``_rewriter`` (statements), over ``_rewrite_expressions``, ``_rewrite_scopes`` and ``_rewrite_base``,
  with ``_syntax`` (what a tree says); ``_install`` swaps the rewritten bodies in and out (:func:`instrument_module`,
  :func:`instrumented_function`), reaching every function through ``_reachable``;
- the hot path the rewritten code calls: ``_runtime`` (attributes, subscripts, values, calls), ``_runtime_names``
  (globals and closure cells), ``_runtime_calls`` (a call the lab cannot see into), ``_active`` (the run being
  recorded, :func:`start_recording`);
- the models the hot path consults: ``_calls`` (what a call into code not rewritten touches), ``_lookups`` (which
  classes an attribute read reads), ``_lazy`` (iterators and views that read their sources later), ``_deep``
  (comparing and formatting read what a value holds), ``_values`` (what a value is, told without running it);
- naming state: ``_recording`` (one run's labels and accesses, :class:`Recording`), ``_walk`` (the object walk that
  names what exists before the run), ``_snapshot`` (whether a kept walk still holds), ``_labels`` (bookkeeping);
- ``_lines``: line granularity, each executed line of the code under test a scheduling point.
"""

from __future__ import annotations

from lab.engine.record._active import start_recording
from lab.engine.record._install import InstrumentedModule, InstrumentError, instrument_module, instrumented_function
from lab.engine.record._lines import LineTracer, line_events_kept
from lab.engine.record._recording import Recording

__all__ = [
    "InstrumentError",
    "InstrumentedModule",
    "LineTracer",
    "Recording",
    "instrument_module",
    "instrumented_function",
    "line_events_kept",
    "start_recording",
]
