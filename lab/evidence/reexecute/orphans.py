"""Nothing a scenario starts outlives the run: the processes workers leave behind are found and ended.

A worker is killed with its whole process group, but a process it started may have left that group, even its
session (``setsid()``, a daemon's double fork). On Linux the parent that runs workers makes itself their
*subreaper* (``PR_SET_CHILD_SUBREAPER``): an orphan of any of them is re-parented to it, not to init, and
:func:`sweep_orphans` finds it among its own children in ``/proc`` and kills it, until none is left. Where the
platform has no such flag, only the worker's process group is killed.

This is the way only where workers' scenarios cannot run in PID namespaces of their own
(:mod:`lab.evidence.reexecute.worker_namespace`): there, what a scenario leaves ends with its namespace, and a sweep
would only risk what the caller itself started while the workers ran (a test session's database server), which
it cannot tell from a worker's leftover.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys

_PR_SET_CHILD_SUBREAPER = 36
_ADOPTING: list[bool] = []
"""Set once this process is a subreaper (:func:`adopt_orphans`): from then on what a worker leaves comes here."""


def adopt_orphans() -> bool:
    """Make this process the subreaper of everything it starts (Linux's ``PR_SET_CHILD_SUBREAPER``): a process a
    worker started, even one that left the worker's session with ``setsid()``, is re-parented to this process
    when the worker ends, not to init, so :func:`sweep_orphans` finds it. False where the platform has no such
    flag (then only the worker's process group is killed)."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        if int(libc.prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)) != 0:
            return False
    except (OSError, AttributeError):
        return False
    _ADOPTING[:] = [True]
    return True


def children(group: int | None = None) -> list[int]:
    """The processes whose parent is this one (read from ``/proc``; none where there is no ``/proc``); only those
    in the process group ``group``, when given."""
    me = str(os.getpid())
    found: list[int] = []
    try:
        names = os.listdir("/proc")
    except OSError:
        return found
    for name in names:
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as handle:
                fields = handle.read().rsplit(b")", 1)[1].split()
        except OSError:
            continue
        if fields[1].decode() == me and (group is None or int(fields[2]) == group):
            found.append(int(name))
    return found


def end_group(group: int) -> None:
    """Kill and reap what of the process group ``group`` (a worker's) was re-parented here, when this process is a
    subreaper: a worker's PID namespace's first process, which stays in the worker's group, is re-parented here
    when the worker is killed first. Nothing else is touched: no process of another group, such as a server the
    caller started."""
    if not _ADOPTING:
        return
    for pid in children(group):
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGKILL)
        with contextlib.suppress(ChildProcessError, OSError):
            os.waitpid(pid, 0)


def sweep_orphans(rounds: int = 50, keep: set[int] | frozenset[int] = frozenset()) -> int:
    """Kill and reap every child of this process that is not running a job any more: the processes workers left
    behind, re-parented here (:func:`adopt_orphans`), but those in ``keep``. Repeated until none is left, since
    killing one re-parents its own children here. Returns how many were ended."""
    ended = 0
    for _ in range(rounds):
        found = [pid for pid in children() if pid not in keep]
        if not found:
            return ended
        for pid in found:
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
            with contextlib.suppress(ChildProcessError, OSError):
                os.waitpid(pid, 0)
            ended += 1
    return ended
