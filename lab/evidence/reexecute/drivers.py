"""Drivers a scenario's run may need, imported before the run: psycopg must see the real ``threading.Lock``."""

from __future__ import annotations

import contextlib
import os
import sys
from pathlib import Path

from lab.scenarios import executed_files
from lab.sessions.stores import POSTGRES_URL_VARIABLE


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
    texts = []
    for file in dict.fromkeys([str(path), *executed_files()]):
        try:
            with open(file, "rb") as handle:
                texts.append(handle.read().lower())
        except OSError:
            continue
    if not any(b"postgres" in text or b"psycopg" in text for text in texts) or _skipped_without_a_server(texts):
        return
    with contextlib.suppress(Exception):  # no driver installed: the store says so when it is used
        __import__(_POSTGRES_MODULE)


def _skipped_without_a_server(texts: list[bytes]) -> bool:
    """True when no server is configured and the files reach one only through ``lesson_postgres_url()``, which
    then raises ``Unavailable`` in ``setup``: the scenario is SKIPPED before it makes a store, and importing
    psycopg for it (0.1 to 0.25 s on a 2-core machine, in each of a run's and its self-audit's workers) would buy
    nothing. A file that spells a URL of its own (``postgresql://``) still gets the driver."""
    if os.environ.get(POSTGRES_URL_VARIABLE, "").strip():
        return False
    spelled = any(b"postgresql://" in text or b"postgres://" in text for text in texts)
    return not spelled and any(b"lesson_postgres_url" in text for text in texts)


_POSTGRES_MODULE = "lab.sessions.stores.postgres"

__all__ = ["prepare_drivers"]
