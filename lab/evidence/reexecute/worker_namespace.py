"""A worker's scenario runs in a PID namespace of its own where the platform allows, so that no signal it sends can
reach ``run.py``, the auditor, or another scenario's worker.

A session and a process group of its own keep terminal signals and ``killpg`` away from a worker, but not a kill by
number: a scenario running as root can ``os.kill(-1, SIGKILL)`` and end every process on the machine, and any
scenario can kill its parent (``os.getppid()``) or a sibling worker it finds in ``/proc``. In a PID namespace of its
own, the numbers a scenario can signal are those of its own namespace only: ``-1`` is everything the scenario
started, its parent is no number it can name, and the processes outside have no number there at all.

On Linux, :func:`contain` ``unshare``\\ s a new PID namespace (as root; else through a user namespace that maps the
worker's own user and group to themselves, where unprivileged ones are allowed), and forks its first process, the
*reaper*. The reaper forks the scenario's process (number 2 there), in a session of its own and with the signal
handlers the worker had (a namespace's first process ignores signals it has no handler for, which would change what
the scenario sees), then holds nothing and reaps whatever ends in the namespace until the scenario's process does.
It passes that process's wait status to the worker on a pipe and ends; with it the kernel ends every process left in
the namespace, a ``setsid()`` daemon included, so nothing a scenario started outlives its worker. Every process of
the namespace has its parent there, so the kernel's teardown never waits on a parent outside it. The worker ends
the way the scenario's process did (the same exit code, or killed by the same signal), so the parent reads the same
status as without a namespace; the reaper stays in the worker's process group, so the parent's ``killpg`` of a
worker it stops ends the whole namespace.

Where no namespace can be made (not Linux, a container that forbids ``unshare``, no user namespaces), the scenario
runs in the worker itself, as before: then a kill by number can still reach other processes of the same user, and
the evidence's defence is that each finished result is already on disk (``run.py --resume``).
"""

from __future__ import annotations

import contextlib
import functools
import os
import signal
import sys
from collections.abc import Callable
from typing import Any

_CLONE_NEWUSER = 0x10000000
_CLONE_NEWPID = 0x20000000
_MAX_FD = 1 << 16
_FAILED = 70
"""The exit code of a worker whose namespace was made but whose scenario's process could not be started."""
SWITCH = "LAB_PID_NAMESPACE"
"""The environment variable that, set to ``off``, runs every scenario in its worker itself (where a namespace
misbehaves, or to see what holds without one)."""


def contain(scenario: Callable[[], int]) -> int:
    """Run ``scenario`` (which returns an exit code) in a PID namespace of its own where one can be made; the exit
    code the worker ends with. Called in a freshly forked, single-threaded worker, and never returns there when the
    scenario's process was killed by a signal: the worker is then killed by the same signal."""
    if os.environ.get(SWITCH) == "off" or not _unshare():
        return scenario()
    status_r, status_w = os.pipe()
    reaper = os.fork()
    if reaper == 0:
        _reaper(scenario, status_w)
    os.closerange(0, status_r)  # only the namespace holds the worker's pipes: they close when its processes end
    os.closerange(status_r + 1, _MAX_FD)
    told = bytearray()
    with contextlib.suppress(OSError):
        while chunk := os.read(status_r, 64):
            told.extend(chunk)
    _wait(reaper)
    return _mirror(int(told)) if told.isdigit() else _FAILED


def available() -> bool:
    """Whether a worker's scenario runs in a PID namespace of its own here (found once per process, by trying it in
    a throwaway one; ``LAB_PID_NAMESPACE=off`` says no)."""
    return os.environ.get(SWITCH) != "off" and _possible()


@functools.cache
def _possible() -> bool:
    if not hasattr(os, "fork") or not sys.platform.startswith("linux"):
        return False
    try:
        if not hasattr(os, "unshare"):
            _libc()  # once, here: every worker forked from now on has it
    except OSError:
        return False
    pid = os.fork()
    if pid == 0:
        os._exit(0 if _unshare() else 1)
    return _wait(pid) == 0


def _unshare() -> bool:
    """Make the next child of this process the first of a new PID namespace: as root directly, else through a user
    namespace mapping this user and group to themselves. False where neither can be made."""
    if not sys.platform.startswith("linux"):
        return False
    if _call_unshare(_CLONE_NEWPID):
        return True
    uid, gid = os.geteuid(), os.getegid()
    if not _call_unshare(_CLONE_NEWUSER | _CLONE_NEWPID):
        return False
    try:  # a user namespace: the same user and group inside, so files are owned and read as before
        for name, text in (("setgroups", "deny"), ("uid_map", f"{uid} {uid} 1"), ("gid_map", f"{gid} {gid} 1")):
            with open(f"/proc/self/{name}", "w", encoding="ascii") as handle:
                handle.write(text)
    except OSError:
        return False
    return True


def _call_unshare(flags: int) -> bool:
    native = getattr(os, "unshare", None)  # Python 3.12 on
    try:
        if native is not None:
            native(flags)
            return True
        return int(_libc().unshare(flags)) == 0
    except (OSError, AttributeError):
        return False


@functools.cache
def _libc() -> Any:
    """The C library, for ``unshare`` where Python does not wrap it (before 3.12)."""
    import ctypes

    return ctypes.CDLL(None, use_errno=True)


def _reaper(scenario: Callable[[], int], status_w: int) -> None:
    """The namespace's first process: start the scenario's process, then reap until it ends, and tell the worker
    how it ended."""
    told = b""
    try:
        handlers = {}
        for number in range(1, signal.NSIG):  # none of the worker's handlers may run here (Ctrl-C's above all)
            with contextlib.suppress(OSError, ValueError, RuntimeError):
                handler = signal.getsignal(number)
                if handler is not None and handler != signal.SIG_DFL:
                    handlers[number] = handler
                    signal.signal(number, signal.SIG_DFL)
        child = os.fork()
        if child == 0:
            code = _FAILED
            try:
                for number, handler in handlers.items():
                    with contextlib.suppress(OSError, ValueError, RuntimeError):
                        signal.signal(number, handler)
                os.close(status_w)
                os.setsid()  # out of the worker's group too: kill(0) reaches the scenario's own processes only
                code = scenario()
            finally:
                os._exit(code)
        os.closerange(0, status_w)
        os.closerange(status_w + 1, _MAX_FD)
        while True:
            try:
                pid, status = os.waitpid(-1, 0)
            except InterruptedError:
                continue
            except ChildProcessError:
                break
            if pid == child:
                told = str(status).encode("ascii")
                break
        with contextlib.suppress(OSError):
            os.write(status_w, told)
    finally:
        os._exit(0)  # and the kernel ends every process left in the namespace


def _wait(pid: int) -> int:
    while True:
        try:
            return os.waitpid(pid, 0)[1]
        except InterruptedError:
            continue
        except ChildProcessError:
            return 0


def _mirror(status: int) -> int:
    """End as the scenario's process ended: killed by the same signal (no core file), or its exit code."""
    if os.WIFSIGNALED(status):
        number = os.WTERMSIG(status)
        with contextlib.suppress(OSError, ValueError):
            import resource

            resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
        with contextlib.suppress(OSError, ValueError, RuntimeError):
            signal.signal(number, signal.SIG_DFL)
            signal.pthread_sigmask(signal.SIG_UNBLOCK, [number])
            os.kill(os.getpid(), number)
        return 128 + number
    return os.waitstatus_to_exitcode(status) if os.WIFEXITED(status) else _FAILED


__all__ = ["SWITCH", "available", "contain"]
