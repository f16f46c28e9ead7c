"""The line tracer: each line of the code under study, run by an actor, is a scheduling point, and nothing else is.

On this interpreter the events come from ``sys.settrace`` (3.11) or ``sys.monitoring`` (3.12+); each other CPython
the machine has (3.12, 3.13) runs the same program in a subprocess, with ``sys.monitoring`` and with
``LAB_LINE_EVENTS=settrace``, and must see the same lines.
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import subprocess
import sys
import textwrap
import threading
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import pytest

from lab.engine.core import DecisionPoint, Policy, RunResult, Scheduler
from lab.engine.record import LineTracer

ROOT = Path(__file__).resolve().parent.parent

_TRACED = textwrap.dedent("""\
    from untraced import double


    def bump(box):
        value = box[0]
        box[0] = value + 1
        return double(box[0])
""")
_UNTRACED = textwrap.dedent("""\
    def double(n):
        result = n * 2
        return result
""")
# What each actor of a two-actor run sees: bump's three body lines, and none of double's (another file).
_BUMP_LINES = [5, 6, 7]


def _import(path: Path, name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _path(module: ModuleType) -> Path:
    assert module.__file__ is not None
    return Path(module.__file__)


@pytest.fixture
def traced(tmp_path: Path) -> Iterator[ModuleType]:
    """``traced.bump`` in a file of its own, calling ``untraced.double`` in another."""
    (tmp_path / "traced.py").write_text(_TRACED)
    (tmp_path / "untraced.py").write_text(_UNTRACED)
    sys.path.insert(0, str(tmp_path))
    try:
        yield _import(tmp_path / "traced.py", "traced")
    finally:
        sys.path.remove(str(tmp_path))
        sys.modules.pop("untraced", None)


class _Alternate:
    """A policy that switches to another runnable actor at every chance."""

    def choose(self, point: DecisionPoint) -> str:
        others = [actor for actor in point.runnable if actor != point.current]
        return others[0] if others else point.runnable[0]


def _run_traced(module: ModuleType, files: list[Path], box: list[int], policy: Policy | None = None) -> RunResult:
    scheduler = Scheduler(policy=policy)
    named = {os.path.realpath(f) for f in files}
    functions = [module.bump, sys.modules["untraced"].double]
    codes = [f.__code__ for f in functions if os.path.realpath(f.__code__.co_filename) in named]  # those files'
    tracer = LineTracer(scheduler, files, codes)
    scheduler.set_actor_hooks(tracer.install, tracer.uninstall)
    scheduler.add_actor("a", lambda: module.bump(box))
    scheduler.add_actor("b", lambda: module.bump(box))
    with tracer.active():
        return scheduler.run()


def _lines(result: RunResult) -> list[tuple[str, str, int]]:
    return [(e.actor, e.obj, e.detail["line"]) for e in result.trace if e.op == "line"]


@pytest.mark.timeout(30)
class TestLineEvents:
    def test_each_line_of_the_traced_file_is_a_step(self, traced: ModuleType) -> None:
        """Every line an actor runs in the traced file becomes one ``line`` event, labelled with the file's stem."""
        result = _run_traced(traced, [_path(traced)], [0])
        expected = [(actor, "traced", line) for actor in ("a", "b") for line in _BUMP_LINES]
        assert _lines(result) == expected
        assert result.outcomes == {"a": "2", "b": "4"}

    def test_a_switch_can_fall_between_two_lines(self, traced: ModuleType) -> None:
        """A policy that switches whenever it can makes both actors read before either writes: a lost update."""
        box = [0]
        result = _run_traced(traced, [_path(traced)], box, policy=_Alternate())
        assert box == [1]
        assert result.outcomes == {"a": "2", "b": "2"}
        plain = Scheduler(policy=_Alternate())
        plain.add_actor("a", lambda: traced.bump(box))
        plain.add_actor("b", lambda: traced.bump(box))
        plain.run()
        assert box == [3]  # untraced, nothing can fall between the lines of bump

    def test_only_the_files_named_are_traced(self, traced: ModuleType) -> None:
        """Naming the helper's file traces the helper's lines and none of the caller's."""
        result = _run_traced(traced, [_path(traced).with_name("untraced.py")], [0])
        assert _lines(result) == [(actor, "untraced", line) for actor in ("a", "b") for line in (2, 3)]

    def test_a_file_reached_through_a_symlink_is_traced(self, traced: ModuleType, tmp_path: Path) -> None:
        """Files are compared after resolving links: the real path names the module imported through a link."""
        linked = tmp_path / "linked"
        linked.mkdir()
        (linked / "alias.py").symlink_to(tmp_path / "traced.py")
        module = _import(linked / "alias.py", "alias")
        result = _run_traced(module, [tmp_path / "traced.py"], [0])
        assert [line for _, _, line in _lines(result)] == _BUMP_LINES * 2

    def test_threads_that_are_not_actors_are_not_traced(self, traced: ModuleType) -> None:
        """Setup code and other threads run the traced file freely while a run is traced."""
        scheduler = Scheduler()
        tracer = LineTracer(scheduler, [_path(traced)], [traced.bump.__code__])
        scheduler.set_actor_hooks(tracer.install, tracer.uninstall)
        box = [0]
        scheduler.add_actor("a", lambda: traced.bump(box))
        with tracer.active():
            traced.bump(box)  # the main thread, before the run
            result = scheduler.run()
            other = threading.Thread(target=traced.bump, args=(box,))
            other.start()
            other.join()
        assert [actor for actor, _, _ in _lines(result)] == ["a"] * len(_BUMP_LINES)
        assert box == [3]


@pytest.mark.timeout(30)
class TestRemoval:
    def test_no_trace_hook_is_left_after_a_run(self, traced: ModuleType) -> None:
        """After a traced run, neither the calling thread nor the pooled actor threads keep a trace function."""
        before = sys.gettrace()
        traced_run = _run_traced(traced, [_path(traced)], [0])
        assert sys.gettrace() is before
        again = Scheduler()
        again.add_actor("a", lambda: sys.gettrace() is None)
        again.add_actor("b", lambda: traced.bump([0]))
        result = again.run()
        assert result.outcomes == {"a": "True", "b": "2"}
        assert _lines(result) == []
        assert len(_lines(traced_run)) == len(_BUMP_LINES) * 2

    @pytest.mark.skipif(sys.version_info < (3, 12), reason="sys.monitoring is new in Python 3.12")
    def test_the_monitoring_tool_is_freed_after_a_run(self, traced: ModuleType) -> None:  # pragma: no cover (3.12+)
        """The tool id the tracer took is free again once the run is over."""
        monitoring = sys.monitoring  # type: ignore[attr-defined,unused-ignore]
        before = [monitoring.get_tool(tool) for tool in range(6)]
        _run_traced(traced, [_path(traced)], [0])
        assert [monitoring.get_tool(tool) for tool in range(6)] == before

    @pytest.mark.skipif(sys.version_info < (3, 12), reason="sys.monitoring is new in Python 3.12")
    def test_an_exploration_keeps_one_tool_and_frees_it(self) -> None:  # pragma: no cover (3.12+)
        """An exploration's runs share one registration, and nothing is left taken or enabled after it."""
        from lab.scenarios.exploring import explore_scenario
        from lab.scenarios.loader import load

        monitoring = sys.monitoring  # type: ignore[attr-defined,unused-ignore]
        before = [monitoring.get_tool(tool) for tool in range(6)]
        loaded = load(ROOT / "tests" / "soundness" / "check_then_act.py")
        found = explore_scenario(loaded, granularity="line")
        assert found.schedules > 1
        assert [monitoring.get_tool(tool) for tool in range(6)] == before


# The same two-actor run in another interpreter: the line events, whether the actor's thread had a trace function
# (settrace) or not (sys.monitoring), and the monitoring tools left taken afterwards.
_PROGRAM = textwrap.dedent("""
    import importlib.util, json, sys
    sys.path.insert(0, sys.argv[1])
    sys.path.insert(0, sys.argv[2])
    from lab.engine.record._lines import LineTracer
    from lab.engine.core._scheduler import Scheduler
    spec = importlib.util.spec_from_file_location("traced", sys.argv[2] + "/traced.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    scheduler = Scheduler()
    tracer = LineTracer(scheduler, [module.__file__], [module.bump.__code__])
    scheduler.set_actor_hooks(tracer.install, tracer.uninstall)
    box = [0]
    hooked = []
    scheduler.add_actor("a", lambda: (hooked.append(sys.gettrace() is not None), module.bump(box))[1])
    scheduler.add_actor("b", lambda: module.bump(box))
    with tracer.active():
        result = scheduler.run()
    monitoring = getattr(sys, "monitoring", None)
    taken = [t for t in range(6) if monitoring is not None and monitoring.get_tool(t) is not None]
    lines = [[e.actor, e.obj, e.detail["line"]] for e in result.trace if e.op == "line"]
    print(json.dumps({"lines": lines, "settrace": hooked[0], "taken": taken}))
""")


def _interpreter(version: str) -> str | None:
    """A working ``python{version}``: on the path, or installed by pyenv (whose shims may refuse to run it)."""
    candidates = [shutil.which(f"python{version}")]
    candidates += sorted(str(p) for p in Path.home().glob(f".pyenv/versions/{version}.*/bin/python{version}"))
    for candidate in candidates:
        if candidate and subprocess.run([candidate, "-c", ""], capture_output=True, timeout=30).returncode == 0:
            return candidate
    return None


@pytest.mark.slow
@pytest.mark.timeout(60)
@pytest.mark.parametrize("version", ["3.12", "3.13"])
@pytest.mark.parametrize("events", ["monitoring", "settrace"])
def test_newer_pythons_see_the_same_lines(version: str, events: str, tmp_path: Path) -> None:
    """On 3.12+, ``sys.monitoring`` (or ``LAB_LINE_EVENTS=settrace``) fires for the same lines, and is removed."""
    python = _interpreter(version)
    if python is None:
        pytest.skip(f"no working python{version} on this machine")
    (tmp_path / "traced.py").write_text(_TRACED)
    (tmp_path / "untraced.py").write_text(_UNTRACED)
    env = {key: value for key, value in os.environ.items() if key != "LAB_LINE_EVENTS"}
    if events == "settrace":
        env["LAB_LINE_EVENTS"] = "settrace"
    done = subprocess.run(
        [python, "-c", _PROGRAM, str(ROOT), str(tmp_path)], capture_output=True, text=True, timeout=50, env=env
    )
    assert done.returncode == 0, done.stderr
    found = json.loads(done.stdout)
    assert found["lines"] == [[actor, "traced", line] for actor in ("a", "b") for line in _BUMP_LINES]
    assert found["settrace"] is (events == "settrace")
    assert found["taken"] == []


_JOIN_CASES = [
    "two_preemptions",
    "check_then_act",
    "closure_list",
    "one_sided_lock",
    "argument_dict_locked",
    "nonlocal_counter",
]


@pytest.mark.timeout(120)
@pytest.mark.parametrize("name", _JOIN_CASES)
def test_joining_lines_that_follow_invisible_steps_loses_no_outcome(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """A line after a step that touched nothing joins that step (no decision of its own). Exploring every schedule
    without that rule reaches exactly the same outcomes, in more schedules: the joined points ordered nothing."""
    from lab.scenarios import world
    from lab.scenarios.exploring import explore_scenario
    from lab.scenarios.loader import load

    loaded = load(Path(__file__).parent / "soundness" / f"{name}.py")
    joined = explore_scenario(loaded, granularity="line", reduction=False)

    class _EveryLine(LineTracer):
        def __init__(self, *args: object, **kwargs: object) -> None:
            kwargs["recorded"] = False
            super().__init__(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(world, "LineTracer", _EveryLine)
    every = explore_scenario(loaded, granularity="line", reduction=False)
    assert not every.budget_hit and not joined.budget_hit
    assert set(joined.outcomes) == set(every.outcomes)
    assert joined.verdict == every.verdict
    assert joined.schedules < every.schedules
