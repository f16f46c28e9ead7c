"""The re-execution child as a fork of the auditor: the same code, already imported, set up as a new one would be.

A new interpreter (``python -I -B``) costs its start and the lab's import, most of an audit's fixed cost. When the
code to run is the auditing checkout's own and this process imported ``lab`` from that very checkout, with no file
of its ``lab/`` changed since this process started (:func:`forkable_root`), a fork of this process runs the very
code a new interpreter would import; it is then set up as that interpreter would be (a session of its own, its
standard streams on pipes, an empty working folder, ``sys.path`` led by the checkout, no bytecode written, the
default signal handlers, every inherited descriptor closed) and runs the same entry point. The archive's code is
never forked into: it runs sandboxed, in a new interpreter with limits (:mod:`lab.evidence.reexecute.child`).
"""

from __future__ import annotations

import contextlib
import gc
import os
import signal
import sys
import threading
import time
import traceback
from pathlib import Path


def forkable_root(root: Path) -> bool:
    """Whether the checkout code at ``root`` may run in a fork of this process: this process imported ``lab`` from
    ``root``; it runs no other thread; no scenario module is loaded here (a fresh
    interpreter would load each afresh); and no file of ``root``'s ``lab/`` changed since this process
    started, so what is imported here is what a new interpreter would import. Only where ``os.fork`` and
    ``/proc`` exist."""
    import lab

    if not hasattr(os, "fork") or threading.active_count() > 1:  # a fork copies one thread
        return False
    if Path(lab.__file__).resolve().parent.parent != root.resolve():
        return False
    if any(name.startswith(("lab_scenario_", "_lab_helpers_of_")) for name in list(sys.modules)):
        return False
    started = process_start_ns()
    return started is not None and unchanged_since(root / "lab", started - MTIME_MARGIN_NS)


MTIME_MARGIN_NS = 1_000_000_000
"""A file's modification time comes from a coarse clock: one written just after this process started may carry
a time a little before it. A file changed this close to the start counts as changed."""


def process_start_ns() -> int | None:
    """When this process started, in ``time.time_ns()`` terms, never later than it did (``/proc``); ``None`` where
    it cannot be told."""
    try:
        with open("/proc/self/stat", "rb") as handle:
            ticks = int(handle.read().rsplit(b")", 1)[1].split()[19])
        with open("/proc/stat", "rb") as handle:
            boot = next(int(line.split()[1]) for line in handle if line.startswith(b"btime "))
    except (OSError, ValueError, IndexError, StopIteration):
        return None
    return boot * 1_000_000_000 + ticks * 1_000_000_000 // os.sysconf("SC_CLK_TCK")


def unchanged_since(folder: Path, moment_ns: int) -> bool:
    """True when no ``*.py`` file below ``folder`` (nor a folder holding one) was modified at or after
    ``moment_ns``, and it could all be looked at."""
    try:
        for where, dirs, files in os.walk(folder, onerror=_raise):
            dirs[:] = [name for name in dirs if name != "__pycache__"]
            if os.stat(where).st_mtime_ns >= moment_ns:
                return False
            for name in files:
                if name.endswith(".py") and os.stat(os.path.join(where, name)).st_mtime_ns >= moment_ns:
                    return False
    except OSError:
        return False
    return True


def _raise(error: OSError) -> None:
    raise error


class Forked:
    """A re-execution child forked from this process, seen through the parts of :class:`subprocess.Popen` that
    :mod:`lab.evidence.reexecute.child` uses (its pipes, ``pid``, ``wait``)."""

    def __init__(self, pid: int, stdout: int, stderr: int) -> None:
        self.pid = pid
        self.stdout = open(stdout, "rb", buffering=0)  # noqa: SIM115  (closed by _kill)
        self.stderr = open(stderr, "rb", buffering=0)  # noqa: SIM115
        self._status: int | None = None

    @classmethod
    def start(cls, root: Path, stdin: int, work: Path) -> Forked:
        for stream in (sys.stdout, sys.stderr):
            with contextlib.suppress(Exception):  # what this process buffered must not be written twice
                stream.flush()
        out_r, out_w = os.pipe()
        err_r, err_w = os.pipe()
        pid = os.fork()
        if pid == 0:  # the child: it never returns, whatever the code it runs does
            _forked_child(root, stdin, out_w, err_w, work)
        os.close(out_w)
        os.close(err_w)
        return cls(pid, out_r, err_r)

    def wait(self, timeout: float) -> int | None:
        """The exit code (negative: the signal), as ``Popen.wait``; ``None`` if it has not ended by ``timeout``."""
        deadline = time.monotonic() + timeout
        while self._status is None:
            try:
                pid, status = os.waitpid(self.pid, os.WNOHANG)
            except ChildProcessError:
                pid, status = self.pid, 0
            if pid:
                self._status = os.waitstatus_to_exitcode(status)
            elif time.monotonic() >= deadline:
                return None
            else:
                time.sleep(0.001)
        return self._status


def _forked_child(root: Path, stdin: int, out_w: int, err_w: int, work: Path) -> None:
    """The forked child, set up as ``python -I -B`` in a session of its own would be, then the re-execution."""
    status = 70
    try:
        gc.freeze()  # a collection would walk, and so copy, every page this process inherited
        os.setsid()
        fds = [os.dup(fd) for fd in (stdin, out_w, err_w)]  # above 2, whatever this process had there
        for target, fd in enumerate(fds):
            os.dup2(fd, target)
        os.closerange(3, 1 << 16)  # the auditor's files, the evidence folder's descriptors above all
        for number in (signal.SIGINT, signal.SIGTERM, signal.SIGPIPE):
            default = signal.default_int_handler if number == signal.SIGINT else signal.SIG_DFL
            signal.signal(number, signal.SIG_IGN if number == signal.SIGPIPE else default)
        sys.stdin = open(0, encoding="utf-8", closefd=False)  # noqa: SIM115
        sys.stdout = open(1, "w", encoding="utf-8", closefd=False)  # noqa: SIM115
        sys.stderr = open(2, "w", encoding="utf-8", errors="backslashreplace", closefd=False)  # noqa: SIM115
        os.chdir(work)
        os.environ["PYTHONDONTWRITEBYTECODE"] = "1"
        sys.dont_write_bytecode = True
        sys.path[:] = [str(root.absolute()), *_interpreter_path()]
        sys.argv = ["-c"]
        from lab.engine.core import ACTOR_POOL
        from lab.evidence.reexecute.rerun import main

        ACTOR_POOL.forget_after_fork()
        status = main()
    except SystemExit as leaving:
        status = leaving.code if isinstance(leaving.code, int) else 1
    except BaseException:
        status = 1
        with contextlib.suppress(BaseException):
            traceback.print_exc()
    finally:
        with contextlib.suppress(BaseException):
            sys.stdout.flush()
            sys.stderr.flush()
        os._exit(status)


def _interpreter_path() -> list[str]:
    """``sys.path`` as ``python -I`` has it: without the script's folder (or the working folder) put first."""
    return list(sys.path if sys.flags.safe_path else sys.path[1:])
