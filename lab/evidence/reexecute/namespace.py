"""Where the archive's code runs: in a PID namespace of its own where the platform allows, so that it cannot see the
auditor's processes (``/proc/<auditor>/environ``, its command line, its open files), and plainly said where not.

``audit.py --execute-archive`` runs code it does not trust. Its environment is scrubbed, but ``/proc`` would still
show it every process of the auditing user, the auditor's own environment included. On Linux ``unshare`` (as root,
or through a user namespace where unprivileged ones are allowed) gives the child a PID namespace with its own
``/proc``: it sees only itself and what it starts, and all of it ends when the child's first process does. The
child's first process there is a shell that only waits for the interpreter (a namespace's first process ignores
signals it has no handler for, which would change how a CPU limit ends the interpreter), and reports how it ended.
Where no namespace can be made, the archive runs as before, and the audit's note says that it could see the
auditor's processes.
"""

from __future__ import annotations

import functools
import os
import shutil
import signal
import subprocess
import sys

_WAIT = (
    "unset PWD OLDPWD SHLVL 2>/dev/null; "
    "[ -d /dev/shm ] && mount -t tmpfs -o mode=1777,size=256m lab-shm /dev/shm 2>/dev/null; "
    '"$@"; status=$?; exit $status'
)
"""The namespace's first process: runs the interpreter as its child (never exec: it would be the first process),
adding nothing to the scrubbed environment it passes on. It gives the archive a ``/dev/shm`` of its own (the
namespace has its own mounts, for its ``/proc``): archived code writes its scratch databases there, and code of an
earlier day left them behind; this one goes with the namespace."""
CONTAINED = "in a PID namespace of its own (unshare), where the auditor's processes were not visible to it"
EXPOSED = (
    "where it could see the auditor's processes in /proc, environments included (no PID namespace could be made "
    "here: unshare is missing or not allowed)"
)


@functools.cache
def pid_namespace() -> tuple[str, ...]:
    """The words that run a command in a new PID namespace with its own ``/proc`` (empty where none can be made),
    found once per process by trying them."""
    unshare, shell = shutil.which("unshare"), shutil.which("sh")
    if not sys.platform.startswith("linux") or unshare is None or shell is None:
        return ()
    ways = [["--pid", "--fork", "--mount-proc", "--kill-child"]]
    user = ["--user", "--map-root-user", *ways[0]]
    ways = [*ways, user] if os.geteuid() == 0 else [user]
    for way in ways:
        prefix = (unshare, *way, shell, "-c", _WAIT, "sh")
        try:
            done = subprocess.run([*prefix, "true"], capture_output=True, timeout=10, check=False)
        except (OSError, subprocess.SubprocessError):
            continue
        if done.returncode == 0:
            return prefix
    return ()


def contained(argv: list[str]) -> tuple[list[str], bool]:
    """``argv`` run in a PID namespace of its own where one can be made; and whether it is."""
    prefix = pid_namespace()
    return ([*prefix, *argv], True) if prefix else (argv, False)


def exit_code(code: int, *, namespaced: bool) -> int:
    """The interpreter's exit code as :class:`subprocess.Popen` gives it (negative: the signal that ended it); in a
    namespace the waiting shell reports a signal as 128 plus its number."""
    if namespaced and 128 < code < 128 + signal.NSIG:
        return -(code - 128)
    return code


def isolation_note(namespaced: bool) -> str:
    """What the audit says of where the archive's code ran."""
    return CONTAINED if namespaced else EXPOSED
