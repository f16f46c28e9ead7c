"""The hot path for names: module globals and closure variables, read and written by the rewritten code.

A global the module assigns, and a closure variable some scope re-binds, are shared state that no object access
shows: the rewriting calls these before each read and store, and they record ``(obj:module M, name)`` or
``(obj:cell M.scope.name, value)``. The base of :class:`lab.engine.record._runtime.ModuleRuntime`, which holds the
module's file so that each access knows where it happened.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any

import lab.engine.record._active as _active
from lab.engine.record._unknown import reach_entries
from lab.engine.record._values import IMMUTABLE_TYPE

if TYPE_CHECKING:
    from lab.engine.record._recording import Recording


class NameRuntime:
    """The name accesses of one instrumented module: its globals and its closure cells."""

    def __init__(self, filename: str, module: str) -> None:
        self._file = filename
        self._module = module
        self._globals = f"obj:module {module}"  # the thing a global of this module is part of

    def _recording(self) -> Recording | None:
        run = _active.recording
        if run is None or getattr(run.local, "actor", None) is None:
            return None
        return run

    def rg(self, name: str, line: int) -> None:
        """Before reading the module global ``name``. Returns ``None`` (the code reads the global right after)."""
        run = _active.recording
        if run is not None and getattr(run.local, "actor", None) is not None:
            if run.schedules:
                run.note((self._globals, name, "r"), (self._file, line))
            else:  # Recording.note, StepLog.accessed inline (see StepLog on why no call)
                steps = run._steps
                if not steps.closed:
                    entry = (self._globals, name, "r")
                    steps.current.add(entry)
                    steps.log.append((steps.index, steps.actor, entry, (self._file, line), steps.locks))

    def wg(self, value: Any, name: str, line: int) -> Any:
        """Before storing ``value`` in the module global ``name``. Returns ``value``.

        A value no access has named yet is named here, by the global's path (as an attribute or item read names
        what it reads): otherwise whichever actor touched it first would name it (``list#b.1`` in one run,
        ``list#a.1`` in another), and the reduction, which compares footprints across runs, would take one object
        for two and miss an order (the fuzzer's finding F7)."""
        run = _active.recording
        if run is not None and getattr(run.local, "actor", None) is not None:
            if not IMMUTABLE_TYPE[type(value)] and id(value) not in run._things:
                run.label(value, f"{self._module}.{name}")
            if run.schedules:
                run.note((self._globals, name, "w"), (self._file, line))
            else:  # Recording.note, StepLog.accessed inline (see StepLog on why no call)
                steps = run._steps
                if not steps.closed:
                    entry = (self._globals, name, "w")
                    steps.current.add(entry)
                    steps.log.append((steps.index, steps.actor, entry, (self._file, line), steps.locks))
        return value

    def rc(self, cell: str, line: int) -> None:
        """Before reading the closure variable ``cell`` (``scope.name``). Returns ``None``."""
        run = _active.recording
        if run is not None and getattr(run.local, "actor", None) is not None:
            if run.schedules:
                run.note((f"obj:cell {self._module}.{cell}", "value", "r"), (self._file, line))
            else:  # Recording.note, StepLog.accessed inline (see StepLog on why no call)
                steps = run._steps
                if not steps.closed:
                    entry = (f"obj:cell {self._module}.{cell}", "value", "r")
                    steps.current.add(entry)
                    steps.log.append((steps.index, steps.actor, entry, (self._file, line), steps.locks))

    def wc(self, value: Any, cell: str, line: int) -> Any:
        """Before storing ``value`` in the closure variable ``cell``. Returns ``value``. A value not named yet is
        named by the cell's path, as :meth:`wg` names a global's (the fuzzer's finding F8)."""
        run = _active.recording
        if run is not None and getattr(run.local, "actor", None) is not None:
            if not IMMUTABLE_TYPE[type(value)] and id(value) not in run._things:
                run.label(value, f"cell {self._module}.{cell}")
            if run.schedules:
                run.note((f"obj:cell {self._module}.{cell}", "value", "w"), (self._file, line))
            else:  # Recording.note, StepLog.accessed inline (see StepLog on why no call)
                steps = run._steps
                if not steps.closed:
                    entry = (f"obj:cell {self._module}.{cell}", "value", "w")
                    steps.current.add(entry)
                    steps.log.append((steps.index, steps.actor, entry, (self._file, line), steps.locks))
        return value

    def ex(self, line: int, *arguments: Any) -> tuple[Any, ...]:
        """Before ``eval`` or ``exec`` of ``arguments`` (the code, and the globals and locals it is given): the code
        is not rewritten, so it is charged as code the lab cannot see, with a write of everything reachable from
        its namespaces (the calling frame's when none are given). Returns ``arguments``."""
        run = self._recording()
        if run is not None:
            frame = sys._getframe(1)
            roots = [(value, "") for value in arguments[1:]]
            if len(arguments) < 2:
                roots.append((frame.f_globals, ""))
            if len(arguments) < 3 and frame.f_code.co_name != "<module>":
                roots.append((frame.f_locals, ""))
            run.scheduler.access_all(reach_entries(run, roots), (self._file, line), schedule=run.schedules)
        return arguments

    def touch_global(self, name: str, line: int) -> None:
        """After a statement stored the global ``name`` through a complex target: records the write, no point."""
        run = self._recording()
        if run is not None:
            run.note((self._globals, name, "w"), (self._file, line), schedule=False)

    def touch_cell(self, cell: str, line: int) -> None:
        """After a statement stored the closure variable ``cell`` through a complex target."""
        run = self._recording()
        if run is not None:
            run.note((f"obj:cell {self._module}.{cell}", "value", "w"), (self._file, line), schedule=False)
