"""Drivers a scenario's run may need, imported before the run: psycopg must see the real ``threading.Lock``."""

from __future__ import annotations

import contextlib
import sys
from pathlib import Path


def prepare_drivers(path: Path) -> None:
    """Import the PostgreSQL store (and psycopg) before a run of a scenario that may use it, never during one.

    The lab imports psycopg only on first use (tens of milliseconds that most workers would pay for nothing), but
    psycopg binds ``threading.Lock`` when it is imported: imported inside a run, by an actor that opens a
    ``postgresql://`` store, it would keep the lab's stand-in. So a scenario whose file, or a helper file it
    loaded, names PostgreSQL or psycopg gets it imported here, between its load and its run; a scenario that
    imports ``PostgresStore`` at its top has imported it already. Only the worker imports it, never the
    parent before its forks: psycopg's 12 MB would make every fork, and every page the parent writes after one,
    dearer (run.py spent 0.12 s more CPU in its parent for 0.07 s of import), and the one worker that needs it
    imports it while the others run on the other processor."""
    if _POSTGRES_MODULE in sys.modules:
        return
    files = [str(path)] + [
        str(getattr(module, "__file__", "") or "")
        for name, module in list(sys.modules.items())
        if name.startswith(("lab_scenario_", "_lab_helpers_of_"))
    ]
    for file in files:
        try:
            with open(file, "rb") as handle:
                text = handle.read().lower()
        except OSError:
            continue
        if b"postgres" in text or b"psycopg" in text:
            with contextlib.suppress(Exception):  # no driver installed: the store says so when it is used
                __import__(_POSTGRES_MODULE)
            return


_POSTGRES_MODULE = "lab.sessions.stores.postgres"

__all__ = ["prepare_drivers"]
