"""The scenario code this process executed: every scenario file and helper module, in the order it first ran.

A worker runs one scenario, and must know what that scenario's code may use before it runs it (the PostgreSQL
driver, :mod:`lab.evidence.reexecute.drivers`). The loader and the helpers' loader note each file just before they
execute it, so the answer is a list kept here, not a walk of ``sys.modules``, which would touch (and so copy, after
a fork) a page of every module the lab imported.
"""

from __future__ import annotations

import os

_EXECUTED: dict[str, None] = {}
"""The files, as the loaders named them, in order, each once."""


def note_executed(path: str | os.PathLike[str]) -> None:
    """Remember that the scenario or helper file ``path`` is about to be executed."""
    _EXECUTED[os.fspath(path)] = None


def executed_files() -> list[str]:
    """The scenario and helper files this process executed, in the order it first did."""
    return list(_EXECUTED)


__all__ = ["executed_files", "note_executed"]
