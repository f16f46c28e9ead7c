"""Adapters that run the classic programs through the peers: frontrun (random search and DPOR) and interleave-test
(PCT). Neither is ever a dependency of the lab: each adapter imports its peer when it runs and reports
``not installed`` when the import fails, so ``bench/bench_classic.py`` runs without them.

Install them beside the lab in a venv of their own (``pip install -e . frontrun interleave-test``). interleave-test
needs Python 3.12 or newer (it schedules through ``sys.monitoring``); on an older interpreter its column reads
``not installed``.

Each adapter gives a :class:`PeerResult`: the verdict (FAIL when the peer found the bug, PASS when it claims none,
INCOMPLETE when it ran out of budget or gave up inconclusive, CRASH when the peer itself broke), the executions it
ran up to and including the first failing one, and the seconds it took. The executions are counted by the number of
times the peer called ``setup`` (one fresh state per execution), which every peer does; where the peer names the
failing execution itself (frontrun's DPOR ``failures``, interleave-test's ``Failure.iteration``) that number wins.
"""

from __future__ import annotations

import importlib
import time
import types
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

NOT_INSTALLED = "not installed"


@dataclass(frozen=True)
class PeerResult:
    """One peer's run of one program."""

    verdict: str
    """FAIL, PASS, INCOMPLETE, CRASH, or ``not installed``."""
    executions: int | None
    """Executions run up to the first failing one (FAIL), or in all (otherwise); None when unknown."""
    seconds: float
    detail: str = ""


@dataclass(frozen=True)
class Peer:
    """A peer strategy: its column name and the function that runs one program."""

    name: str
    run: Callable[[types.ModuleType, int, float], PeerResult]


class _Counted:
    """``setup`` wrapped to count the executions a peer runs."""

    def __init__(self, program: types.ModuleType) -> None:
        self.program = program
        self.calls = 0

    def __call__(self) -> object:
        self.calls += 1
        return self.program.setup(None)


def _holds(program: types.ModuleType, state: object) -> bool:
    return all(dict(program.check(state)).values())


def _import(name: str) -> Any:
    """The peer's module, or None when it is not installed (or not installable on this interpreter)."""
    try:
        return importlib.import_module(name)
    except (ImportError, AttributeError):  # AttributeError: interleave-test forced onto a Python without sys.monitoring
        return None


def installed(module: str) -> bool:
    return _import(module) is not None


def _frontrun(strategy: str) -> Callable[[types.ModuleType, int, float], PeerResult]:
    def run(program: types.ModuleType, budget: int, seconds: float) -> PeerResult:
        frontrun = _import("frontrun")
        if frontrun is None:
            return PeerResult(NOT_INSTALLED, None, 0.0)
        # Outside the ``frontrun`` CLI, frontrun schedules only once its cooperative locks are patched in.
        cooperative = importlib.import_module("frontrun._cooperative")
        setup = _Counted(program)
        names = list(program.ACTORS)
        options: dict[str, Any] = {"total_timeout": seconds, "deadlock_timeout": 1.0, "timeout_per_run": 2.0}
        if strategy == "dpor":
            options.update(max_executions=budget, reproduce_on_failure=0)
        else:
            options.update(max_attempts=budget, seed=0)
        cooperative.patch_locks()
        start = time.perf_counter()
        try:
            result = frontrun.explore(
                setup=setup,
                workers=[program.ACTORS[name] for name in names],
                invariant=lambda state: _holds(program, state),
                strategy=strategy,
                **options,
            )
        except AssertionError as error:  # frontrun's DPOR lets a worker's assertion through: it found the bug
            return PeerResult("FAIL", setup.calls, time.perf_counter() - start, f"raised {error}")
        except Exception as error:
            return PeerResult("CRASH", setup.calls, time.perf_counter() - start, f"{type(error).__name__}: {error}")
        finally:
            cooperative.unpatch_locks()
        took = time.perf_counter() - start
        if result.property_holds is False:
            failures = list(result.failures or [])
            executions = int(failures[0][0]) if failures else setup.calls
            first_line = next(iter(str(result.explanation or "").strip().splitlines()), "")
            return PeerResult("FAIL", executions, took, first_line)
        if result.property_holds is True:
            return PeerResult("PASS", setup.calls, took)
        return PeerResult("INCOMPLETE", setup.calls, took, str(result.inconclusive_reason or ""))

    return run


def _interleave_pct(program: types.ModuleType, budget: int, seconds: float) -> PeerResult:
    it = _import("interleave_test")
    if it is None:
        return PeerResult(NOT_INSTALLED, None, 0.0)
    setup = _Counted(program)
    names = list(program.ACTORS)

    def model() -> None:
        state = setup()
        raised: list[BaseException] = []

        def body(actor: Callable[[Any], object]) -> None:
            try:
                actor(state)
            except Exception as error:  # handed to the model, which fails the schedule with it
                raised.append(error)

        tasks = [it.spawn(body, program.ACTORS[name], name=name) for name in names]
        for task in tasks:
            task.join()
        if raised:
            raise raised[0]
        if not _holds(program, state):
            raise AssertionError(f"check failed: {program.check(state)}")

    start = time.perf_counter()
    try:
        result = it.explore(model, iterations=budget, seed=0, strategy="pct", timeout=seconds, raise_on_failure=False)
    except Exception as error:
        return PeerResult("CRASH", setup.calls, time.perf_counter() - start, f"{type(error).__name__}: {error}")
    took = time.perf_counter() - start
    if result.failure is not None:
        return PeerResult("FAIL", int(result.failure.iteration) + 1, took, str(result.failure.kind))
    return PeerResult("PASS" if result.exhausted else "INCOMPLETE", int(result.schedules_run), took)


def frontrun_store(workers: int, seconds: float = 600.0) -> PeerResult:
    """frontrun's DPOR to a verdict on the correct check-then-act store (``CheckedStore`` of
    ``bench/models/check_then_act_threading.py``, a plain ``threading.Lock``) with ``workers`` workers, each reading
    the version and committing if it is unchanged, as the lab's ``bench_locks`` runs it.

    Exhaustive, as a verdict must be: ``preemption_bound=None`` (frontrun's default of 2 bounds the search, and then
    its PASS covers only schedules of at most two preemptions). frontrun 0.7 needs 4 / 49 / 1,186 executions for
    2 / 3 / 4 workers."""
    frontrun = _import("frontrun")
    if frontrun is None:
        return PeerResult(NOT_INSTALLED, None, 0.0)
    cooperative = importlib.import_module("frontrun._cooperative")
    store = importlib.import_module("bench.models.check_then_act_threading")
    built = [0]

    def setup() -> Any:
        built[0] += 1
        return store.CheckedStore()  # its threading.Lock() is frontrun's cooperative lock: patched below

    def work(state: Any) -> object:
        return state.commit_if(state.version, "worker")

    cooperative.patch_locks()
    start = time.perf_counter()
    try:
        result = frontrun.explore(
            setup=setup,
            workers=[work] * workers,
            invariant=lambda state: len(state.commits) == len(set(state.commits)),
            strategy="dpor",
            preemption_bound=None,
            max_executions=100_000,
            reproduce_on_failure=0,
            deadlock_timeout=1.0,
            total_timeout=seconds,
        )
    except Exception as error:
        return PeerResult("CRASH", built[0], time.perf_counter() - start, f"{type(error).__name__}: {error}")
    finally:
        cooperative.unpatch_locks()
    took = time.perf_counter() - start
    verdict = {True: "PASS", False: "FAIL"}.get(result.property_holds, "INCOMPLETE")
    return PeerResult(verdict, int(result.num_explored), took, str(result.inconclusive_reason or ""))


PEERS = (
    Peer("frontrun-random", _frontrun("random")),
    Peer("frontrun-dpor", _frontrun("dpor")),
    Peer("interleave-pct", _interleave_pct),
)
"""The peer strategies, in the order of their columns."""

PEER_MODULES = {"frontrun-random": "frontrun", "frontrun-dpor": "frontrun", "interleave-pct": "interleave_test"}
