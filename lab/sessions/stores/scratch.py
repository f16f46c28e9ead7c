"""Scratch databases for lessons: a fresh SQLite file per run, in a folder that goes when its process ends.

:func:`scratch_database` copies a template made once per process into a folder of the process's own, in a RAM-backed
folder where there is one. The folder is removed at exit (``atexit``); a process that ends with ``os._exit``, as a
scenario's worker, the explorer's parallel workers and the real-thread cross-check do, runs no ``atexit``, so a
forked child makes its folder inside its parent's, and the lab's scenario workers make theirs under
``$LAB_SCRATCH_DIR``, a folder their parent removes.
"""

from __future__ import annotations

import atexit
import itertools
import os
import shutil
import tempfile
from pathlib import Path

SCRATCH_VARIABLE = "LAB_SCRATCH_DIR"
"""The folder under which a process makes its scratch databases' folder, when set. A process removes that folder
when it exits (``atexit``), but the lab's scenario workers end with ``os._exit``, which runs no ``atexit``: so
their parent sets this to a folder of its own, and removes it once they end."""
_scratch: list[str] = []
"""This process's scratch folder, once made; a forked child makes its own (it is emptied in the child)."""
_inherited: list[str] = []
"""In a forked child, its parent's scratch folder, if the parent had one: the child's goes inside it, so that the
parent's cleanup removes it too. A forked child often ends with ``os._exit`` (the explorer's parallel workers, the
real-thread cross-check), which runs no ``atexit``, and its folder would otherwise stay."""
_numbers = itertools.count(1)


def _after_fork_in_child() -> None:
    _inherited[:] = _scratch[:1]
    _scratch.clear()


os.register_at_fork(after_in_child=_after_fork_in_child)


def scratch_base() -> str | None:
    """Where scratch folders go: ``$LAB_SCRATCH_DIR``; else, in a forked child, its parent's scratch folder; else a
    RAM-backed folder where there is one (syncing a file there costs nothing); else ``None``, the system's temporary
    folder."""
    chosen = os.environ.get(SCRATCH_VARIABLE)
    if chosen:
        return chosen
    if _inherited and os.path.isdir(_inherited[0]):
        return _inherited[0]
    memory = Path("/dev/shm")
    return str(memory) if memory.is_dir() and os.access(memory, os.W_OK) else None


def scratch_database(name: str) -> Path:
    """A path to a fresh SQLite database with the lab's tables, in a folder of this process's own that is removed
    when the process ends (or, in a scenario's worker, by the worker's parent: :data:`SCRATCH_VARIABLE`).

    Every call returns a new file (a scenario is set up afresh for every run the explorer makes); the files of the
    previous call of the same name are removed first, since that run is over. The file is a copy of a template made
    once per process: creating a database and its tables costs milliseconds of file syncing, a copy does not.
    """
    if not _scratch:
        made = tempfile.mkdtemp(prefix="lab-stores-", dir=scratch_base())
        _scratch.append(made)
        atexit.register(shutil.rmtree, made, True)
        from lab.sessions.stores.sqlite import SqliteStore

        SqliteStore(Path(made) / "template.sqlite").close()  # the last connection out checkpoints the WAL
    folder = Path(_scratch[0])
    for old in folder.glob(f"{name}-*"):
        old.unlink(missing_ok=True)
    path = folder / f"{name}-{next(_numbers)}.db"
    shutil.copyfile(folder / "template.sqlite", path)
    return path


__all__ = ["SCRATCH_VARIABLE", "scratch_base", "scratch_database"]
