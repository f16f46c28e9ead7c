"""Recording: the modules under test rewritten so that every access to shared state is reported as it happens.

- ``_rewriter``: the AST rewriter and its install (:func:`instrument_module`, :func:`instrumented_function`);
- ``_accesses``: what the rewritten code calls at run time, the object walk that labels state, the footprints of
  calls into code that is not rewritten, and the attribute-lookup model (:func:`start_recording`);
- ``_lines``: line granularity, each executed line of the code under test a scheduling point.
"""

from __future__ import annotations

from lab.engine.record._accesses import Recording, start_recording
from lab.engine.record._lines import LineTracer, line_events_kept
from lab.engine.record._rewriter import InstrumentedModule, InstrumentError, instrument_module, instrumented_function

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
