# size: the worker and the parent reading it share one pipe protocol and its limits
"""One scenario cannot harm another: each scenario file is loaded and run in a worker process of its own.

:func:`run_file` forks a worker that loads one scenario file, runs it, and reports the result as JSON on a pipe;
the parent, which writes the evidence, never imports the file. So whatever the file does, at import or while its
actors run (patch the runner, ``os._exit``, crash the interpreter, leave a non-daemon thread running, print without
end), it happens in its worker, and at worst that one scenario is recorded as ERROR with a one-line reason
(:data:`~lab.scenarios.runner.Verdict`), while the others run on:

- a worker that ends (``os._exit``, a signal) before it reported is ``ended (...) before it reported a result``;
- a worker that prints more than :data:`OUTPUT_CAP` is stopped: ``printed more than 1 MiB``; what it prints below
  that goes to the parent's standard error;
- a worker that does not finish within its limit (the watchdog three times over, plus :data:`GRACE_SECONDS`) is
  stopped;
- a worker ends with ``os._exit``, so a thread it leaked dies with it, and its whole process group is killed;
- its scenario runs in a PID namespace of its own where one can be made
  (:mod:`~lab.evidence.reexecute.worker_namespace`), so no signal it sends reaches the parent or another worker,
  and every process it started ends with the namespace.

The report is plain JSON, never a pickle: the parent reads nothing from a worker that could run code in it. The
parent process is forked only while it has run no scenario itself; the lab's pool of idle actor threads, which a
fork does not copy, is replaced by an empty one in the worker. Where ``os.fork`` does not exist, the file is loaded
and run in the calling process, as before.
"""

from __future__ import annotations

import base64
import contextlib
import gc
import io
import json
import os
import select
import selectors
import shutil
import signal
import sys
import tempfile
import time
import tokenize
import traceback
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from lab.engine.core import ACTOR_POOL, BlockedActor, TraceEvent, encode_trace
from lab.evidence.records.plan import ScenarioFacts
from lab.evidence.records.records import result_fields
from lab.evidence.records.text import STRICT_JSON, refuse_constant
from lab.evidence.reexecute.drivers import prepare_drivers
from lab.evidence.reexecute.orphans import adopt_orphans, children, end_group, sweep_orphans
from lab.evidence.reexecute.worker_namespace import available, contain
from lab.scenarios.loader import BrokenScenario, LoadedScenario, load
from lab.scenarios.probe_points import TRANSPORT_MODULES, points_in_file
from lab.scenarios.results import NOT_RUN
from lab.scenarios.runner import Check, ScenarioResult, Verdict, run_scenario
from lab.scenarios.under_test import DEFAULT_MODULES
from lab.sessions.stores import SCRATCH_VARIABLE, scratch_base

ISOLATED = hasattr(os, "fork")
"""Whether scenarios run in worker processes on this platform."""
OUTPUT_CAP = 1 << 20
"""The most a worker may print (its scenario's own output); past it, the worker is stopped."""
RESULT_CAP = 256 << 20
"""The largest report a worker may send (its trace included)."""
FORK_PATIENCE = 5.0
"""How long a job waits for a worker process when none can be forked and none runs whose end would free one (a
fork bomb's processes still ending, another program's): then it is ERROR, ``its worker could not be started``."""
ENDING_SECONDS = 2.0
"""How long a worker whose pipes closed may take to end on its own. It ends after everything its scenario started
(its namespace's teardown, :mod:`~lab.evidence.reexecute.worker_namespace`), so waiting for it is waiting for all of
that: stopped at once, a process of the scenario could still be dying after the run returned, and the worker would
be recorded as killed by the parent, not as its scenario ended. A scenario that closed its pipes and runs on is
stopped after this."""
GRACE_SECONDS = 60.0
"""How long a worker may take beyond three times its watchdog."""
PARALLEL = max(1, min((os.cpu_count() or 1) + 1, 4))
"""How many workers run at once: one more than the processors (at most 4), since a worker is idle while its actors
hand the baton from thread to thread, and another worker uses the processor meanwhile (on 2 processors, 3 workers
ran the 34 scenarios in 0.22 s, 2 in 0.27 s)."""
_MAX_FD = 1 << 16
_POLL = 0.05
_ENDING_POLL = 0.001
"""How often a wait on workers' pipes looks whether a worker ended while something it left holds them open."""


@dataclass(frozen=True, slots=True)
class Job:
    """One scenario file to run, with the options :func:`~lab.scenarios.runner.run_scenario` gets."""

    path: Path
    watchdog_seconds: float
    variant: str | None = None
    granularity: str = "probe"
    describe: bool = False
    """Only load the file and say what it declares (:class:`~lab.evidence.records.plan.ScenarioFacts`): run
    nothing."""
    shown: Path | None = None
    """The file the outcome names, when ``path`` is a copy of it (the run's own copy of the scenario folder, which
    the workers load): every mention of the copy's folder in the worker's report names this file's folder instead,
    so nothing recorded depends on where the copy was made."""

    @property
    def named(self) -> Path:
        """The path the outcome names: :attr:`shown`, or ``path``."""
        return self.shown if self.shown is not None else self.path

    def options(self) -> dict[str, Any]:
        """The keyword arguments of ``run_scenario``: the variant and granularity only when given."""
        options: dict[str, Any] = {"watchdog_seconds": self.watchdog_seconds}
        if self.variant:
            options["variant"] = self.variant
        if self.granularity != "probe":
            options["granularity"] = self.granularity
        return options


def run_file(
    path: Path, *, watchdog_seconds: float, variant: str | None = None, granularity: str = "probe"
) -> ScenarioResult | BrokenScenario:
    """Load and run the scenario file ``path`` in a worker process; its result, or the file's one-line problem."""
    return run_files([Job(path, watchdog_seconds, variant, granularity)], parallel=1)[0]


@dataclass(frozen=True, slots=True)
class Ran:
    """What one job's worker gave: its outcome (``None`` for a job that only described its file) and what the file
    declares (``None`` when it did not load or the worker did not say)."""

    outcome: ScenarioResult | BrokenScenario | None
    facts: ScenarioFacts | None


def run_files(
    jobs: Sequence[Job],
    *,
    parallel: int = PARALLEL,
    on_done: Callable[[int, ScenarioResult | BrokenScenario], None] | None = None,
) -> list[ScenarioResult | BrokenScenario]:
    """Run each job's file in a worker of its own (:func:`run_jobs`); the outcomes in the jobs' order."""

    def done(index: int, ran: Ran) -> None:
        if on_done is not None and ran.outcome is not None:
            on_done(index, ran.outcome)

    found = []
    for job, ran in zip(jobs, run_jobs(jobs, parallel=parallel, on_done=done), strict=True):
        found.append(ran.outcome if ran.outcome is not None else BrokenScenario(job.path.stem, job.named, "not run"))
    return found


def run_jobs(
    jobs: Sequence[Job],
    *,
    parallel: int = PARALLEL,
    on_done: Callable[[int, Ran], None] | None = None,
) -> list[Ran]:
    """Run each job's file in a worker of its own, at most ``parallel`` at a time; the outcomes in the jobs' order.
    ``on_done`` is told each job's index and outcome as it finishes (for progress), in the order they finish.

    Workers are processes, and a scenario depends on nothing outside its own process but what it creates fresh (a
    scratch database), so running two at once changes no outcome: it only uses a second core. The parent stays
    single-threaded: one loop watches every running worker's pipes and deadline.
    """
    if not ISOLATED:
        found = []
        for index, job in enumerate(jobs):
            found.append(_in_process(job))
            if on_done is not None:
                on_done(index, found[-1])
        return found
    # in PID namespaces of their own, what the workers' scenarios leave ends with each namespace; without them,
    # it is re-parented here and swept at the end, but the caller's own children (a database server, say)
    sweeping = not available() and adopt_orphans()
    before = set(children()) if sweeping else set()
    _warm()
    outcomes: dict[int, Ran] = {}
    running: dict[int, _Worker] = {}  # by the descriptor of its report pipe
    waiting = list(enumerate(jobs))
    scratch = tempfile.mkdtemp(prefix="lab-workers-", dir=scratch_base())  # theirs, removed here: see _Worker.start
    stalled: float | None = None  # since when no worker could be forked, while none ran
    try:
        with selectors.DefaultSelector() as selector:
            while waiting or running:
                while waiting and len(running) < max(parallel, 1):
                    index, job = waiting[0]
                    try:
                        worker = _Worker.start(index, job, scratch)
                    except OSError as error:  # no process or pipe to be had: a scenario's fork bomb, say
                        stalled = stalled if stalled is not None else time.monotonic()
                        if running or time.monotonic() - stalled < FORK_PATIENCE:
                            break  # tried again once a running worker ends, or a moment later
                        waiting.pop(0)
                        reason = f"its worker could not be started: {error.strerror or error}"
                        outcomes[index] = Ran(_errored(job.named, reason), None)
                        if on_done is not None:
                            on_done(index, outcomes[index])
                        continue
                    stalled = None
                    waiting.pop(0)
                    running[worker.report_r] = worker
                    selector.register(worker.report_r, selectors.EVENT_READ, worker)
                    selector.register(worker.output_r, selectors.EVENT_READ, worker)
                if not running:
                    if waiting:
                        time.sleep(_POLL)  # none could be started: wait a moment before trying again
                    continue
                timeout = min(max(min(w.deadline for w in running.values()) - time.monotonic(), 0.0), _POLL)
                if any(w.drained is not None for w in running.values()):
                    timeout = min(timeout, _ENDING_POLL)  # one is ending: see it end soon
                for key, _ in selector.select(timeout):
                    key.data.read(key.fd, selector)
                now = time.monotonic()
                for worker in list(running.values()):
                    if worker.reason is None and now >= worker.deadline:
                        worker.reason = f"its worker did not finish within {worker.limit:g} s; stopped"
                    worker.ended(selector)
                    if worker.done:
                        for fd in worker.open_fds():
                            selector.unregister(fd)
                        del running[worker.report_r]
                        outcomes[worker.index] = worker.finish()
                        if on_done is not None:
                            on_done(worker.index, outcomes[worker.index])
    finally:
        for worker in running.values():  # interrupted (Ctrl-C): no worker outlives the parent
            worker.finish()
        if sweeping:
            sweep_orphans(keep=before)
        shutil.rmtree(scratch, ignore_errors=True)
        gc.unfreeze()
    return [outcomes[index] for index in range(len(jobs))]


def _warm() -> None:
    """Make what every worker would otherwise make for itself, once, before the first fork, and keep the collector
    off the parent's objects (``gc.freeze``): a worker's first collection would otherwise walk every object it
    inherited, and so copy each page of the parent's heap (most of a worker's cost). What is made here is the
    lab's and the standard library's, never a scenario's: the tokenizer's pattern (``inspect.getsource``, which
    the loader calls, compiles it on first use), and the probe points the lab's own code under test announces
    (parsed from its files, which every scenario that holds or signals reads)."""
    with contextlib.suppress(Exception):
        list(tokenize.generate_tokens(io.StringIO("pass\n").readline))
    for name in (*DEFAULT_MODULES, *TRANSPORT_MODULES):
        origin = getattr(sys.modules.get(name), "__file__", None)
        if origin:
            points_in_file(os.path.realpath(origin))
    gc.freeze()


def _in_process(job: Job) -> Ran:
    loaded = load(job.path)
    if isinstance(loaded, BrokenScenario):
        return Ran(loaded, None)
    facts = describe(loaded)
    if job.describe:
        return Ran(None, facts)
    prepare_drivers(job.path)
    return Ran(run_scenario(loaded, **job.options()), facts)


def describe(loaded: LoadedScenario) -> ScenarioFacts:
    """What a loaded scenario declares that decides what a run explores: its variants, and whether it is pinned."""
    return ScenarioFacts(tuple(str(name) for name in loaded.cls.variants), loaded.cls.pin is not None)


class _Worker:
    """One forked worker, seen from the parent: its pipes, what it sent, and why it must be stopped, if it must."""

    def __init__(self, index: int, job: Job, pid: int, report_r: int, output_r: int) -> None:
        self.index, self.job, self.pid = index, job, pid
        self.report_r, self.output_r = report_r, output_r
        self.limit = 3.0 * job.watchdog_seconds + GRACE_SECONDS
        self.deadline = time.monotonic() + self.limit
        self.report = bytearray()
        self.printed = 0
        self.closed: set[int] = set()
        self.reason: str | None = None
        self.status: int | None = None
        """The worker's wait status, once it ended (its pipes may still be held open by what it left behind)."""
        self.drained: float | None = None
        """When both its pipes closed: from then it has :data:`ENDING_SECONDS` to end on its own."""

    @classmethod
    def start(cls, index: int, job: Job, scratch: str) -> _Worker:
        """Fork the worker for ``job``. Its scratch databases go under ``scratch``, which the parent removes when
        the run ends: a worker ends with ``os._exit``, which runs none of the ``atexit`` cleanups that would
        otherwise remove them (each run left a folder of them in ``/dev/shm``). An ``OSError`` when no process or
        pipe can be made (a scenario's fork bomb holds them): nothing is left open."""
        for stream in (sys.stdout, sys.stderr):
            with contextlib.suppress(Exception):  # what the parent buffered must not be written twice
                stream.flush()
        made: list[int] = []
        try:
            report_r, report_w = os.pipe()
            made += [report_r, report_w]
            output_r, output_w = os.pipe()
            made += [output_r, output_w]
            pid = os.fork()
        except OSError:
            for fd in made:
                os.close(fd)
            raise
        if pid == 0:  # the worker: it never returns, whatever the scenario does
            _worker(job, report_w, output_w, scratch)
        os.close(report_w)
        os.close(output_w)
        return cls(index, job, pid, report_r, output_r)

    @property
    def done(self) -> bool:
        """It ended, or there is a reason to stop it: its limit, too much output, or its pipes closed for longer
        than :data:`ENDING_SECONDS` without its end."""
        if self.reason is not None or self.status is not None:
            return True
        return self.drained is not None and time.monotonic() >= self.drained + ENDING_SECONDS

    def ended(self, selector: selectors.BaseSelector) -> None:
        """Notice the worker's end even while a process it left behind holds its pipes open: then read what the
        pipes already hold, and stop waiting for them."""
        if self.status is not None:
            return
        try:
            pid, status = os.waitpid(self.pid, os.WNOHANG)
        except ChildProcessError:
            pid, status = self.pid, 0
        if pid == 0:
            return
        for fd in self.open_fds():
            for _ in range(RESULT_CAP // (1 << 16) + 2):
                ready, _, _ = select.select([fd], [], [], 0)
                if not ready or fd in self.closed or self.reason is not None:
                    break
                self.read(fd, selector)
        self.status = status

    def open_fds(self) -> list[int]:
        """The worker's pipes the parent still watches."""
        return [fd for fd in (self.report_r, self.output_r) if fd not in self.closed]

    def read(self, fd: int, selector: selectors.BaseSelector) -> None:
        """Read what is there: the report, or output to pass on (until there is too much of either)."""
        chunk = os.read(fd, 1 << 16)
        if not chunk:
            self.closed.add(fd)
            selector.unregister(fd)
            if len(self.closed) == 2:
                self.drained = time.monotonic()
        elif fd == self.report_r:
            self.report.extend(chunk)
            if len(self.report) > RESULT_CAP:
                self.reason = f"its worker reported more than {_size(RESULT_CAP)}; stopped"
        else:
            self.printed += len(chunk)
            if self.printed > OUTPUT_CAP:
                self.reason = f"it printed more than {_size(OUTPUT_CAP)}; stopped"
            else:
                with contextlib.suppress(Exception):
                    sys.stderr.write(chunk.decode("utf-8", "replace"))

    def finish(self) -> Ran:
        """Stop the worker and all it started, reap it, close its pipes; its outcome."""
        with contextlib.suppress(OSError):
            os.killpg(self.pid, signal.SIGKILL)
        with contextlib.suppress(OSError):
            os.kill(self.pid, signal.SIGKILL)  # in case it ended before it made its own group
        status = self.status if self.status is not None else _reap(self.pid)
        end_group(self.pid)
        for fd in (self.report_r, self.output_r):
            with contextlib.suppress(OSError):
                os.close(fd)
        reason = self.reason
        if reason is None and not self.report:
            reason = _exit_reason(status)
        if reason:
            return Ran(_errored(self.job.named, reason), None)
        try:
            report = json.loads(_as_shown(bytes(self.report), self.job), parse_constant=refuse_constant)
            facts = _facts(report.get("facts"))
            if self.job.describe and "broken" not in report:
                return Ran(None, facts)
            return Ran(_decode(self.job.named, report), facts)
        except (ValueError, KeyError, TypeError, AttributeError, RecursionError):
            return Ran(_errored(self.job.named, "its worker reported a result that cannot be read"), None)


def _as_shown(report: bytes, job: Job) -> bytes:
    """The worker's report, naming the folder of :attr:`Job.shown` wherever it names the folder of the copy it
    loaded (its tracebacks above all), as JSON writes both."""
    if job.shown is None:
        return report
    copy, shown = (json.dumps(str(path.parent) + os.sep)[1:-1].encode() for path in (job.path, job.shown))
    return report.replace(copy, shown)


def _worker(job: Job, report_w: int, output_w: int, scratch: str) -> None:
    code = 70
    try:
        os.environ[SCRATCH_VARIABLE] = scratch
        os.setsid()  # a session and a process group of its own: no terminal signal reaches it, nor its siblings'
        report, output = os.dup(report_w), os.dup(output_w)  # above 2, whatever the parent had closed
        os.dup2(output, 1)
        os.dup2(output, 2)
        os.dup2(report, 3)
        # every other descriptor inherited from the parent goes: other workers' pipes above all, which this
        # scenario could otherwise read from, or hold open
        os.closerange(4, _MAX_FD)
        code = contain(lambda: _run(job))  # in a PID namespace of its own where one can be made
    except BaseException:  # the worker must never return into the parent's code
        with contextlib.suppress(BaseException):
            traceback.print_exc()
    finally:
        os._exit(code)


def _run(job: Job) -> int:
    """Load and run the job's file, and write the report on descriptor 3; the exit code (0: reported)."""
    code = 70
    try:
        sys.stdout = open(1, "w", encoding="utf-8", errors="backslashreplace", closefd=False)  # noqa: SIM115
        sys.stderr = open(2, "w", encoding="utf-8", errors="backslashreplace", closefd=False)  # noqa: SIM115
        _forget_threads()
        loaded = load(job.path)
        if isinstance(loaded, BrokenScenario):
            answer: dict[str, Any] = {"broken": loaded.problem}
        else:
            facts = describe(loaded)
            answer = {"facts": {"variants": list(facts.variants), "pinned": facts.pinned}}
            if not job.describe:  # only a run may use a driver (a broken or only described file runs nothing)
                prepare_drivers(job.path)
                answer["result"] = _encode(run_scenario(loaded, **job.options()))
        _write_all(3, json.dumps(answer).encode("utf-8"))
        code = 0
    except BaseException:  # whatever the scenario raises, even SystemExit, ends here: the caller only exits
        with contextlib.suppress(BaseException):
            traceback.print_exc()
    finally:
        with contextlib.suppress(BaseException):
            sys.stdout.flush()
            sys.stderr.flush()
    return code


def _forget_threads() -> None:
    """A fork copies only the thread that forked: the idle actor threads the parent's pool remembers do not exist
    here, so the worker starts with an empty pool (and a fresh lock, should a parent thread have held the old one)."""
    ACTOR_POOL.forget_after_fork()


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def _size(cap: int) -> str:
    return f"{cap >> 20} MiB" if cap >= 1 << 20 and cap % (1 << 20) == 0 else f"{cap} bytes"


def _reap(pid: int) -> int:
    try:
        return os.waitpid(pid, 0)[1]
    except ChildProcessError:
        return 0


def _exit_reason(status: int) -> str:
    if os.WIFSIGNALED(status):
        number = os.WTERMSIG(status)
        try:
            name = signal.Signals(number).name
        except ValueError:
            name = f"signal {number}"
        return f"its worker was killed by {name} before it reported a result"
    return f"its worker ended (exit code {os.waitstatus_to_exitcode(status)}) before it reported a result"


def _encode(result: ScenarioResult) -> dict[str, Any]:
    return {
        **result_fields(result),
        "checks": [[c.name, c.passed, c.reason, c.kind] for c in result.checks],
        "trace": encode_trace(result.trace).decode("utf-8"),
        "requests": [base64.b64encode(body).decode("ascii") for body in result.requests],
        "blocked": [[b.actor, b.waits_for] for b in result.blocked],
        "errors": dict(result.errors),
        "seconds": result.seconds,
    }


def _decode(path: Path, report: Any) -> ScenarioResult | BrokenScenario:
    if "broken" in report:
        return BrokenScenario(path.stem, path, _text(report["broken"]))
    data = report["result"]
    if data["name"] != path.stem:
        raise ValueError("another scenario's name")
    events = [STRICT_JSON.decode(line) for line in _text(data["trace"]).splitlines()]
    trace = tuple(TraceEvent(e["step"], e["actor"], e["op"], e["obj"], e["detail"]) for e in events)
    if encode_trace(trace).decode("utf-8") != data["trace"]:
        raise ValueError("a trace the lab would not write")
    return ScenarioResult(
        name=path.stem,
        lesson=_text(data["lesson"]),
        description=_text(data["description"]),
        source=_text(data["source"]),
        mutant=bool(data["mutant"]),
        verdict=Verdict(data["verdict"]),
        run_status=_text(data["run_status"]),
        expect=_strings(data["expect"]),
        outcomes=_strings(data["outcomes"]),
        state=dict(data["state"]),
        checks=tuple(Check(_text(n), bool(p), _text(r), _text(k)) for n, p, r, k in data["checks"]),
        trace=trace,
        requests=tuple(base64.b64decode(body, validate=True) for body in data["requests"]),
        transport_calls=int(data["transport_calls"]),
        blocked=tuple(BlockedActor(_text(a), _text(w)) for a, w in data["blocked"]),
        errors=_strings(data["errors"]),
        problem=_text(data["problem"]),
        seconds=float(data["seconds"]),
        variant=_text(data["variant"]),
        granularity=_text(data["granularity"]),
        store=_text(data["store"]),
    )


def _facts(value: Any) -> ScenarioFacts | None:
    if value is None:
        return None
    return ScenarioFacts(tuple(_text(name) for name in value["variants"]), bool(value["pinned"]))


def _text(value: Any) -> str:
    if not isinstance(value, str):
        raise TypeError("not a string")
    return value


def _strings(value: Any) -> dict[str, str]:
    return {_text(key): _text(item) for key, item in dict(value).items()}


def _errored(path: Path, reason: str) -> ScenarioResult:
    """The record of a scenario whose worker did not report: ERROR, not run, the reason as its one failed check.

    Nothing about the scenario is known but its file: the parent never imports it.
    """
    return ScenarioResult(
        name=path.stem,
        lesson=f"{path.stem} (its worker did not report)",
        description=f"{path.stem} (its worker did not report)",
        source=path.name,
        mutant=False,
        verdict=Verdict.ERROR,
        run_status=NOT_RUN,
        expect={},
        outcomes={},
        state={},
        checks=(Check("scenario runs", False, reason, "run"),),
        trace=(),
        problem=reason,
    )


__all__ = ["ISOLATED", "Job", "Ran", "adopt_orphans", "describe", "run_file", "run_files", "run_jobs", "sweep_orphans"]
