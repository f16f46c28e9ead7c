"""Line granularity: every line executed in the modules under test becomes a scheduling point.

A learner's own session has no probe points, and an explorer that can switch threads only at probes and locks
would call a racy check-then-act green. With ``sys.settrace`` (Python 3.11 has no ``sys.monitoring``) each line
event in the chosen files hands control to the scheduler *before* the line runs, so a switch can fall between a
check and the write that relies on it.

Each line announces a footprint read off its source: the ``self`` attributes it reads and writes (a method call on
an attribute, ``self.items.append(x)``, counts as a write unless the method is known to only read). That keeps the
explorer's reduction sharp: two lines that touch different attributes, or only read the same one, commute.

Two traps, handled: (1) leaving a ``with lock:`` block fires a second line event on the ``with`` line while the lock
is still held; the line only *reads* ``self._lock``, and the lock's own release is a separate lab step, so the
extra event is harmless. (2) An actor parked at a line while holding a *real* ``threading.Lock`` blocks every
other actor outside the lab's view: the watchdog reports it as HUNG, naming the actor and its stack. Inject the
lab's lock into the session under test.
"""

from __future__ import annotations

import ast
import sys
from collections.abc import Iterable
from functools import cache
from pathlib import Path
from types import FrameType
from typing import Any

from lab.engine.footprint import Footprint
from lab.engine.scheduler import Scheduler

_READ_ONLY_METHODS = frozenset({"get", "keys", "values", "items", "copy", "count", "index", "locked", "is_set"})


class LineTracer:
    """Turns line events in ``files`` into scheduling points of ``scheduler``, for actor threads only.

    With ``schedule=False`` it only *observes*: each line's footprint is added to the running step's executed
    footprint, and no switch can happen there. The explorer uses that at the default granularity, to judge
    precisely which steps conflict without adding scheduling points.
    """

    def __init__(self, scheduler: Scheduler, files: Iterable[str | Path], *, schedule: bool = True) -> None:
        self._scheduler = scheduler
        self._schedule = schedule
        self._files = {str(Path(f).resolve()) for f in files}
        self._labels = {f: Path(f).stem for f in self._files}

    def install(self) -> None:
        """Start tracing in the calling thread (the scheduler calls this at the start of each actor)."""
        sys.settrace(self._on_call)

    def uninstall(self) -> None:
        """Stop tracing in the calling thread."""
        sys.settrace(None)

    def _on_call(self, frame: FrameType, event: str, arg: Any) -> Any:
        if event == "call" and frame.f_code.co_filename in self._files:
            return self._on_line
        return None

    def _on_line(self, frame: FrameType, event: str, arg: Any) -> Any:
        if event == "line" and not self._scheduler.aborted:
            filename = frame.f_code.co_filename
            owner = frame.f_locals.get("self")
            footprint = _instance_footprint(_owner_key(owner), line_accesses(filename).get(frame.f_lineno, ()))
            if self._schedule:
                self._scheduler.point(footprint)
                self._scheduler.record("line", self._labels[filename], {"line": frame.f_lineno})
            else:
                self._scheduler.touch(footprint)
        return self._on_line


def _owner_key(owner: object) -> str:
    if owner is None:
        return "-"
    session_id = getattr(owner, "session_id", None)
    return f"{type(owner).__name__}:{session_id}" if isinstance(session_id, str) else type(owner).__name__


def _instance_footprint(owner: str, accesses: Iterable[tuple[str, str]]) -> Footprint:
    return frozenset(("attr", f"{owner}.{attr}", mode) for attr, mode in accesses)


@cache
def line_accesses(filename: str) -> dict[int, tuple[tuple[str, str], ...]]:
    """For each line of ``filename``, the ``self`` attributes the statement on it reads (``r``) or writes (``w``)."""
    try:
        tree = ast.parse(Path(filename).read_text(encoding="utf-8"))
    except (OSError, SyntaxError, UnicodeDecodeError):
        return {}
    by_line: dict[int, set[tuple[str, str]]] = {}
    for statement in ast.walk(tree):
        if not isinstance(statement, ast.stmt):
            continue
        header, last = _header(statement)
        found: set[tuple[str, str]] = set()
        for part in header:
            found |= _self_accesses(part)
        for line in range(statement.lineno, last + 1):
            by_line.setdefault(line, set()).update(found)
    return {line: tuple(sorted(entries)) for line, entries in by_line.items()}


def _header(statement: ast.stmt) -> tuple[list[ast.AST], int]:
    """The parts of a statement that run on its own line(s): a compound statement's header, not its body."""
    end = statement.end_lineno or statement.lineno
    body = getattr(statement, "body", None)
    if isinstance(body, list) and body and isinstance(body[0], ast.stmt):
        end = max(statement.lineno, body[0].lineno - 1)
        parts: list[ast.AST] = []
        for name in ("test", "iter", "target", "items", "subject"):
            value = getattr(statement, name, None)
            if isinstance(value, list):
                parts.extend(value)
            elif isinstance(value, ast.AST):
                parts.append(value)
        return parts, end
    return [statement], end


def _self_accesses(node: ast.AST) -> set[tuple[str, str]]:
    found: set[tuple[str, str]] = set()
    for child in ast.walk(node):
        if isinstance(child, ast.Attribute) and _is_self(child.value):
            found.add((child.attr, "w" if isinstance(child.ctx, ast.Store | ast.Del) else "r"))
        elif isinstance(child, ast.Subscript) and isinstance(child.ctx, ast.Store | ast.Del):
            if isinstance(child.value, ast.Attribute) and _is_self(child.value.value):
                found.add((child.value.attr, "w"))
        elif isinstance(child, ast.Call) and isinstance(child.func, ast.Attribute):
            target = child.func.value
            mutating = child.func.attr not in _READ_ONLY_METHODS
            if mutating and isinstance(target, ast.Attribute) and _is_self(target.value):
                found.add((target.attr, "w"))
        elif isinstance(child, ast.AugAssign) and isinstance(child.target, ast.Attribute) and _is_self(
            child.target.value
        ):
            found.add((child.target.attr, "w"))
    return found


def _is_self(node: ast.AST) -> bool:
    return isinstance(node, ast.Name) and node.id == "self"
