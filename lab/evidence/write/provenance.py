"""Where a run came from: the git commit of the checkout, and whether it had uncommitted changes.

Git is optional: when it is not installed, ``root`` is not inside a checkout, or git fails or hangs, the answer
is ``None`` and the run is still recorded. ``git status`` runs with ``--no-optional-locks`` so that reading the
state never writes the index.
"""

from __future__ import annotations

import contextlib
import subprocess
from pathlib import Path

from lab.engine.core import Json

_TIMEOUT_SECONDS = 10.0


def git_state(root: Path, *, exclude: Path | None = None) -> dict[str, Json] | None:
    """``{"commit": hex, "dirty": bool, "changed_files": n}`` for the checkout at ``root``, or ``None``.

    ``exclude`` (the evidence folder being written, often inside the checkout) does not count as a change.
    """
    commit = _git(root, "rev-parse", "HEAD")
    if commit is None:
        return None
    pathspec = ["--", "."]
    if exclude is not None:
        with contextlib.suppress(ValueError):  # a folder outside the checkout is never seen by git anyway
            pathspec.append(f":(exclude){exclude.resolve().relative_to(root.resolve()).as_posix()}")
    status = _git(root, "--no-optional-locks", "status", "--porcelain", *pathspec)
    if status is None:
        return None
    changed = [line for line in status.splitlines() if line.strip()]
    return {"commit": commit.strip(), "dirty": bool(changed), "changed_files": len(changed)}


def _git(root: Path, *args: str) -> str | None:
    try:
        done = subprocess.run(
            ["git", "-C", str(root), *args], capture_output=True, text=True, timeout=_TIMEOUT_SECONDS, check=False
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout if done.returncode == 0 else None
