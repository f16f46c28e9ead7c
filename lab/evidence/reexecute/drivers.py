"""Drivers a scenario's run may need, imported before the run: psycopg must see the real ``threading.Lock``."""

from __future__ import annotations

import contextlib
import sys
from pathlib import Path

from lab.scenarios import executed_files


def prepare_drivers(path: Path) -> None:
    """Import the PostgreSQL store (and psycopg) before a run of a scenario that may use it, never during one.

    The lab imports psycopg only on first use (tens of milliseconds that most workers would pay for nothing), but
    psycopg binds ``threading.Lock`` when it is imported: imported inside a run, by an actor that opens a
    ``postgresql://`` store, it would keep the lab's stand-in. So a scenario whose file, or a helper file it
    loaded, names PostgreSQL or psycopg gets it imported here, between its load and its run; a scenario that
    imports ``PostgresStore`` at its top has imported it already. Only the worker imports it, never the
    parent before its forks: psycopg's 12 MB would make every fork, and every page the parent writes after one,
    dearer (run.py spent 0.12 s more CPU in its parent for 0.07 s of import), and the one worker that needs it
    imports it while the others run on the other processor. The files looked at are those the loader executed
    (:func:`~lab.scenarios.executed.executed_files`), not found by walking ``sys.modules``: that walk
    touched a page of every module the lab imported, which a fork then copied (a third of a trivial worker's
    cost)."""
    if _POSTGRES_MODULE in sys.modules:
        return
    for file in dict.fromkeys([str(path), *executed_files()]):
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
