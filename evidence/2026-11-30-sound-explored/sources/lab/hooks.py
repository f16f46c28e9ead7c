"""The two hooks that code under study calls: probe points, and accesses to state the lab cannot see.

Sessions, stores and transports know nothing about the lab's scheduler. They call ``probe("commit:enter")`` at
points a lesson may want to hold a thread, and :func:`note_shared_access` around operations on state that lives
outside Python objects (a database row). By default both do nothing; the engine passes its own probe in and
installs a recorder for shared accesses while it records a run. Production code keeps the no-ops, and this module
depends on nothing but :mod:`lab.errors`, so the code under study never imports the engine.
"""

from __future__ import annotations

from collections.abc import Callable

from lab.errors import UsageError

Probe = Callable[[str], None]
"""A probe hook: called with the name of a point ("commit:enter")."""

SharedAccessRecorder = Callable[[str, str, str, tuple[str, int]], None]
"""What the engine installs: ``(name, key, mode, where)`` for one access to shared state."""

ANY_KEY = "*"
"""The key of an access that touches the whole of a thing (every row of a table, say)."""

_recorder: SharedAccessRecorder | None = None


def no_probe(point: str) -> None:
    """The default probe: does nothing, costs one function call."""


def note_shared_access(name: str, key: str = ANY_KEY, mode: str = "w", *, where: tuple[str, int] = ("", 0)) -> None:
    """Record an access to state the lab cannot see by itself -- a database row, a file -- named ``name``.

    Code that keeps shared state outside Python objects (a store talking to SQLite or PostgreSQL through C calls)
    calls this around each operation, so that two actors' operations on the same row are seen to conflict even
    though each uses its own connection object. Outside a recorded run it does nothing.
    """
    if mode not in ("r", "w"):
        raise UsageError(f"mode is 'r' or 'w', not {mode!r}")
    recorder = _recorder
    if recorder is not None:
        recorder(name, key, mode, where)


def install_shared_access_recorder(recorder: SharedAccessRecorder | None) -> None:
    """Install (or, with ``None``, remove) the recorder :func:`note_shared_access` forwards to; the engine's job."""
    global _recorder
    _recorder = recorder
