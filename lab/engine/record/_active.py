"""Which run is being recorded: the one global every function of the hot path reads first.

Outside a recorded run (no recording active, or a thread that is not an actor) every function the rewritten code
calls is a plain pass-through, so instrumented code behaves exactly like the original. Code that reports its own
accesses through :func:`lab.hooks.note_shared_access` is forwarded here too.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from lab import hooks

if TYPE_CHECKING:
    from lab.engine.record._recording import Recording


recording: Recording | None = None
"""The run being recorded, or ``None``: read as ``_active.recording`` by the runtime (one module attribute load)."""


def start_recording(run: Recording | None) -> None:
    """Make ``run`` the run being recorded (``None`` stops recording)."""
    global recording
    recording = run


def _record_shared_access(name: str, key: str, mode: str, where: tuple[str, int]) -> None:
    """The recorder :func:`lab.hooks.note_shared_access` forwards to: outside a recorded run, or an actor, nothing."""
    run = recording
    if run is None or getattr(run.local, "actor", None) is None:
        return
    run.note((f"obj:{name}", key, mode), where)


hooks.install_shared_access_recorder(_record_shared_access)
