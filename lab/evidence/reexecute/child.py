"""The child process a re-execution runs in: which code it imports, what it may see, and how far it may go.

Two kinds of code are ever run, and nothing else (:class:`Code`):

- **the auditing checkout's own code**, when every archived file that would run is identical to it: the child puts
  the checkout first on ``sys.path``, keeps the auditor's environment (a scenario may need the database the run
  used), and is bounded in time and in output;
- **the archived code, on purpose** (``audit.py --execute-archive``): a temporary copy of the verified archive is
  put on ``sys.path``; the environment is scrubbed to a short allow-list (no secrets, ``HOME`` and ``TMPDIR`` inside
  the temporary folder); before a line of the archive runs, the child's own bootstrap (the auditor's code) lowers its
  resource limits: CPU time, address space, file size, open files, no core files.

Either way the child starts as ``python -I -B`` (no ``PYTHON*`` variables, no user site, no bytecode written), in an
empty temporary working folder, in a session of its own whose every process is killed when it ends, times out or
prints more than :data:`OUTPUT_CAP`; its standard error is kept only as its last :data:`STDERR_TAIL` bytes. The
evidence folder is never on its path and never its working folder.

When the code to run is the auditing checkout's and the auditor imported ``lab`` from that very checkout,
unchanged since, the child is a fork of the auditor set up as the new interpreter would be
(:mod:`lab.evidence.reexecute.forked`), held to the same limits and killed the same way.

The archive's code runs in a PID namespace of its own where one can be made (:mod:`lab.evidence.reexecute.namespace`),
so it cannot see the auditor's processes; the audit's note says whether it did. This is containment, not a
sandbox: code run with ``--execute-archive`` can still read the files the auditing user can read, write to absolute
paths that user can write, and use the network. Run an archive you do not trust in a
container or a throwaway machine.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import selectors
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from lab.evidence.reexecute.forked import Forked, forkable_root
from lab.evidence.reexecute.namespace import contained, exit_code

OUTPUT_CAP = 64 << 20
"""The most a child may print on standard output (its JSON report); past it, it is stopped."""
STDERR_TAIL = 64 << 10
"""How much of a child's standard error is kept: the end, where a traceback says what went wrong."""
ALLOWED_ENVIRONMENT = ("PATH", "LANG", "LC_ALL", "LC_CTYPE", "TZ")
"""The only variables a sandboxed child inherits; ``HOME``, ``TMPDIR`` and ``PYTHONDONTWRITEBYTECODE`` are set."""
MEMORY_LIMIT = 4 << 30
"""Address space of a sandboxed child (``RLIMIT_AS``)."""
FILE_SIZE_LIMIT = 64 << 20
"""The largest file a sandboxed child may write (``RLIMIT_FSIZE``)."""
OPEN_FILES_LIMIT = 256
"""Descriptors a sandboxed child may hold open (``RLIMIT_NOFILE``)."""

_BOOT = """\
import json, sys
limits = json.loads(sys.argv[2])
if limits:
    import resource
    for name, value in limits:
        kind = getattr(resource, name, None)
        if kind is not None:
            hard = resource.getrlimit(kind)[1]
            value = value if hard == resource.RLIM_INFINITY else min(value, hard)
            resource.setrlimit(kind, (value, value))
sys.path.insert(0, sys.argv[1])
try:
    from lab.evidence.reexecute.rerun import main
except ModuleNotFoundError as missing:
    if missing.name not in ("lab.evidence.reexecute", "lab.evidence.reexecute.rerun"):
        raise
    from lab.evidence.rerun import main  # an archive written before lab/evidence was grouped by role
sys.exit(main())
"""
"""The child's first code, the auditor's own: limits, then the path, then the re-execution's entry point."""


@dataclass(frozen=True, slots=True)
class Code:
    """The code a re-execution runs: ``root`` goes first on ``sys.path`` (``lab`` must be imported from inside it);
    ``sandboxed`` scrubs the environment and limits resources; ``label`` says which code it is, in notes."""

    root: Path
    sandboxed: bool
    label: str


@dataclass(frozen=True, slots=True)
class Finished:
    """What a child printed on standard output, when it exited 0 within its limits."""

    stdout: bytes


def run_child(code: Code, request: bytes, limit: float, python: str) -> Finished | str:
    """Run the re-execution child with ``request`` on its standard input; its output, or one line saying why not.

    ``limit`` bounds the wall-clock time (and, sandboxed, the CPU time). Every process of the child's session is
    killed when this returns, whatever happened, a Ctrl-C of the auditor included.
    """
    started = start_child(code, request, limit, python)
    if isinstance(started, str):
        return started
    try:
        return started.result()
    finally:
        started.close()


class Running:
    """A re-execution child started and not yet collected: what it runs and was asked, and its process.

    Started early, it works while its caller does something else (the writer writes the folder it will audit);
    :meth:`result` then waits for it, within ``limit`` seconds of its start. :meth:`close` ends it, and everything
    it started, whatever happened, and removes its temporary folder; a child never collected is closed too."""

    def __init__(
        self,
        code: Code,
        request: bytes,
        limit: float,
        scratch: tempfile.TemporaryDirectory[str],
        process: subprocess.Popen[bytes] | Forked,
        *,
        namespaced: bool = False,
    ) -> None:
        self.code, self.request, self.limit = code, request, limit
        self.namespaced = namespaced
        """Whether it runs in a PID namespace of its own (:mod:`lab.evidence.reexecute.namespace`)."""
        self._scratch, self._process = scratch, process
        self._deadline = time.monotonic() + limit
        self.began = time.perf_counter()
        self._closed = False

    def matches(self, code: Code, request: bytes, limit: float) -> bool:
        """True when this child runs ``code`` on ``request`` within ``limit``: it is the child the caller would
        start now, and its report is that child's."""
        return not self._closed and (self.code, self.request, self.limit) == (code, request, limit)

    def result(self) -> Finished | str:
        """What the child printed once it exited within its limits, or one line saying why not; then it is ended."""
        try:
            return _collect(self._process, self._deadline, self.limit, namespaced=self.namespaced)
        finally:
            self.close()

    def close(self) -> None:
        """End the child's session and remove its folder (again: nothing)."""
        if self._closed:
            return
        self._closed = True
        try:
            _kill(self._process)
        finally:
            self._scratch.cleanup()


def start_child(code: Code, request: bytes, limit: float, python: str) -> Running | str:
    """Start the re-execution child with ``request`` on its standard input (see :func:`run_child`); the running
    child, or one line saying why it could not start."""
    scratch = tempfile.TemporaryDirectory(prefix="lab-rerun-")
    try:
        base = Path(scratch.name)
        for name in ("work", "home", "tmp"):
            (base / name).mkdir()
        (base / "request.json").write_bytes(request)
        limits = _limits(limit) if code.sandboxed else []
        namespaced = False
        argv = [python, "-I", "-B", "-c", _BOOT, str(code.root.absolute()), json.dumps(limits)]
        env = _environment(base) if code.sandboxed else {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
        with open(base / "request.json", "rb") as stdin:
            process: subprocess.Popen[bytes] | Forked
            if python == sys.executable and forkable(code):
                process = Forked.start(code.root, stdin.fileno(), base / "work")
            else:
                if code.sandboxed:  # the archive's code: where it cannot see the auditor's processes, if it can be
                    argv, namespaced = contained(argv)
                process = subprocess.Popen(
                    argv,
                    stdin=stdin,
                    stdout=subprocess.PIPE,
                    stderr=subprocess.PIPE,
                    cwd=base / "work",
                    env=env,
                    start_new_session=True,
                )
    except OSError as error:
        scratch.cleanup()
        return f"re-execution could not start: {error.strerror or error}"
    except BaseException:
        scratch.cleanup()
        raise
    return Running(code, request, limit, scratch, process, namespaced=namespaced)


def _limits(limit: float) -> list[tuple[str, int]]:
    return [
        ("RLIMIT_CPU", math.ceil(limit) + 1),
        ("RLIMIT_AS", MEMORY_LIMIT),
        ("RLIMIT_FSIZE", FILE_SIZE_LIMIT),
        ("RLIMIT_NOFILE", OPEN_FILES_LIMIT),
        ("RLIMIT_CORE", 0),
    ]


def _environment(base: Path) -> dict[str, str]:
    env = {name: os.environ[name] for name in ALLOWED_ENVIRONMENT if name in os.environ}
    env.update(HOME=str(base / "home"), TMPDIR=str(base / "tmp"), PYTHONDONTWRITEBYTECODE="1")
    return env


def _collect(
    process: subprocess.Popen[bytes] | Forked, deadline: float, limit: float, *, namespaced: bool = False
) -> Finished | str:
    """Read both pipes until they close, before ``deadline`` (``limit`` seconds after the child started) and within
    :data:`OUTPUT_CAP` bytes; then the verdict."""
    out, err = bytearray(), bytearray()
    assert process.stdout is not None and process.stderr is not None
    with selectors.DefaultSelector() as selector:
        selector.register(process.stdout, selectors.EVENT_READ, out)
        selector.register(process.stderr, selectors.EVENT_READ, err)
        while selector.get_map():
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return f"re-execution did not finish within {limit:g} s"
            for key, _ in selector.select(remaining):
                chunk = os.read(key.fd, 1 << 16)
                if not chunk:
                    selector.unregister(key.fileobj)
                    continue
                key.data.extend(chunk)
                if key.data is err and len(err) > STDERR_TAIL:
                    del err[: len(err) - STDERR_TAIL]
                if len(out) > OUTPUT_CAP:
                    return f"re-execution printed more than {OUTPUT_CAP >> 20} MiB; stopped"
    try:
        code = process.wait(max(deadline - time.monotonic(), 0.0))
    except subprocess.TimeoutExpired:
        return f"re-execution did not finish within {limit:g} s"
    if code is None:
        return f"re-execution did not finish within {limit:g} s"
    code = exit_code(code, namespaced=namespaced)
    if code < 0:
        return f"re-execution was killed by {_signal_name(-code)}"
    if code != 0:
        lines = [line for line in err.decode("utf-8", "replace").splitlines() if line.strip()]
        return f"re-execution failed (exit {code}): {lines[-1].strip() if lines else 'no message'}"
    return Finished(bytes(out))


def _signal_name(number: int) -> str:
    try:
        name = signal.Signals(number).name
    except ValueError:
        return f"signal {number}"
    reason = {"SIGXCPU": ": its CPU time limit", "SIGXFSZ": ": its file size limit"}.get(name, "")
    return name + reason


def _kill(process: subprocess.Popen[bytes] | Forked) -> None:
    """End the child and everything it started (its session), then reap it."""
    with contextlib.suppress(OSError):
        os.killpg(process.pid, signal.SIGKILL)
    with contextlib.suppress(OSError, subprocess.TimeoutExpired):
        process.wait(5.0)
    for pipe in (process.stdout, process.stderr):
        if pipe is not None:
            pipe.close()


def forkable(code: Code) -> bool:
    """Whether ``code`` may run in a fork of this process (:func:`~lab.evidence.reexecute.forked.forkable_root`):
    never the archive's code, which runs sandboxed in a new interpreter."""
    return not code.sandboxed and forkable_root(code.root)
