"""What a run ran is what it archived, and a killed run leaves what finished (issue 23, point 2): the sources are
read and hashed once before any scenario runs, the workers load those bytes (the run's own copy), a change in the
checkout or in that copy during the run is a problem named in the folder, and each result reaches the disk as its
scenario finishes."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from lab.evidence.reexecute.worker_namespace import SWITCH, available
from tests.evidence_checkout import FROZEN

LESSON = (FROZEN / "scenarios" / "out_of_order_commit.py").read_text(encoding="utf-8")


def _checkout(tmp_path: Path, scenarios: dict[str, str]) -> Path:
    """A copy of the frozen checkout holding only ``scenarios`` (name -> source) in its scenario folder."""
    root = Path(shutil.copytree(FROZEN, tmp_path / "checkout", ignore=shutil.ignore_patterns("scenarios")))
    (root / "scenarios").mkdir()
    for name, text in scenarios.items():
        (root / "scenarios" / f"{name}.py").write_text(text, encoding="utf-8")
    return root


def _python(root: Path, *args: str, namespace: bool = True) -> subprocess.CompletedProcess[str]:
    env = {**os.environ} if namespace else {**os.environ, SWITCH: "off"}
    return subprocess.run(
        [sys.executable, *args], cwd=root, capture_output=True, text=True, timeout=180, check=False, env=env
    )


def _run(root: Path, out: Path, *names: str, namespace: bool = True) -> subprocess.CompletedProcess[str]:
    words = [word for name in names for word in ("--scenario", name)]
    return _python(root, str(root / "run.py"), "--out", str(out), *words, namespace=namespace)


@pytest.mark.slow
@pytest.mark.timeout(180)
def test_a_scenario_rewriting_another_in_the_checkout_changes_neither_its_run_nor_its_archive(
    tmp_path: Path,
) -> None:
    """The attack of issue 23: a scenario that rewrites another's file in the checkout made that one BROKEN, and
    the rewritten bytes were archived. Now the victim runs from the bytes read before anything ran, those are
    archived, and the change is named in run.json and by every audit."""
    victim = tmp_path / "checkout" / "scenarios" / "b_victim.py"
    attacker = f"import pathlib\npathlib.Path({str(victim)!r}).write_text('this is not python(')\n" + LESSON
    root = _checkout(tmp_path, {"a_attacker": attacker, "b_victim": LESSON})
    out = tmp_path / "ev"
    done = _run(root, out, "a_attacker", "b_victim")
    assert done.returncode == 1, done.stdout + done.stderr  # the self-audit names the change
    result = json.loads((out / "scenarios" / "b_victim" / "result.json").read_text(encoding="utf-8"))
    assert result["verdict"] == "PASS"
    assert (out / "sources" / "scenarios" / "b_victim.py").read_text(encoding="utf-8") == LESSON
    run = json.loads((out / "run.json").read_text(encoding="utf-8"))
    assert run["sources_changed"] == ["scenarios/b_victim.py changed in the checkout"]
    audited = _python(root, str(root / "audit.py"), str(out), "--no-rerun")
    assert audited.returncode == 1
    assert "the sources changed while the run went on: scenarios/b_victim.py changed in the checkout" in " ".join(
        audited.stdout.split()
    )


@pytest.mark.slow
@pytest.mark.timeout(180)
def test_a_scenario_rewriting_the_runs_own_copy_is_named(tmp_path: Path) -> None:
    """A scenario may find the run's own copy (its ``__file__``) and rewrite a sibling there: that is named too."""
    attacker = (
        "import pathlib\n(pathlib.Path(__file__).parent / 'b_victim.py').write_text('this is not python(')\n" + LESSON
    )
    root = _checkout(tmp_path, {"a_attacker": attacker, "b_victim": LESSON})
    out = tmp_path / "ev"
    done = _run(root, out, "a_attacker", "b_victim")
    assert done.returncode == 1, done.stdout + done.stderr
    run = json.loads((out / "run.json").read_text(encoding="utf-8"))
    assert run["sources_changed"] == [
        "scenarios/b_victim.py changed in the run's own copy, which the scenarios ran from"
    ]
    assert (out / "sources" / "scenarios" / "b_victim.py").read_text(encoding="utf-8") == LESSON


@pytest.mark.slow
@pytest.mark.timeout(180)
def test_a_killed_parent_leaves_every_finished_result(tmp_path: Path) -> None:
    """A scenario whose import kills its parent left only started.json. Now the sources and each result written
    before the kill are in the folder, which every audit calls unfinished. (Without a PID namespace: in one, the
    parent is out of the scenario's reach, as the next test shows.)"""
    out = tmp_path / "ev"
    first = out / "scenarios" / "a_first" / "result.json"
    killer = (  # it waits for the first result to be written (workers run side by side), then kills
        f"import os, pathlib, signal, time\nend = time.monotonic() + 60\n"
        f"while not pathlib.Path({str(first)!r}).exists() and time.monotonic() < end:\n    time.sleep(0.01)\n"
        "os.kill(os.getppid(), signal.SIGKILL)\n" + LESSON
    )
    root = _checkout(tmp_path, {"a_first": LESSON, "b_second": LESSON, "z_killer": killer})
    done = _run(root, out, "a_first", "b_second", "z_killer", namespace=False)
    assert done.returncode == -9
    assert not (out / "SHA256SUMS").exists() and (out / "started.json").is_file()
    assert (out / "sources.json").is_file() and (out / "sources" / "scenarios" / "z_killer.py").is_file()
    finished = sorted(p.parent.name for p in (out / "scenarios").glob("*/result.json"))
    assert "a_first" in finished and set(finished) <= {"a_first", "b_second"}
    audited = _python(root, str(root / "audit.py"), str(out))
    assert audited.returncode == 1 and "UNFINISHED" in audited.stdout
    said = " ".join(audited.stdout.split())
    assert f"it holds the results of {len(finished)} scenario" in said and "with --resume keeps" in said


KILLS_BY_NUMBER = """import os, signal
if os.getpid() != 2 or os.getppid() != 1:  # never outside a namespace: as root it would end every process
    raise RuntimeError("not in a PID namespace of its own")
for name in os.listdir("/proc"):  # /proc still lists the machine's processes: the run, its workers, the test
    if name.isdigit() and int(name) != os.getpid():
        try:
            os.kill(int(name), signal.SIGKILL)
        except OSError:
            pass
os.kill(os.getppid(), signal.SIGKILL)
"""
KILLS_EVERYTHING = """import os, signal
if os.getpid() != 2 or os.getppid() != 1:
    raise RuntimeError("not in a PID namespace of its own")
child = os.fork()
if child == 0:
    signal.pause()
    os._exit(0)
os.kill(-1, signal.SIGKILL)  # as root: every process it may signal but itself and the namespace's first
if not os.WIFSIGNALED(os.waitpid(child, 0)[1]):
    raise RuntimeError("kill(-1) did not reach its own child")
"""


@pytest.mark.slow
@pytest.mark.timeout(180)
@pytest.mark.skipif(not available(), reason="no PID namespace can be made here")
def test_in_a_pid_namespace_no_kill_reaches_outside_the_scenario(tmp_path: Path) -> None:
    """Issue 23: a scenario killing its parent, its siblings (found in /proc) or, as root, every process
    (``kill(-1)``) ended the run or turned passing scenarios into ERROR. In a PID namespace of its own the
    numbers it can signal are its own: ``kill(-1)`` ends only what it started, a kill by any number found in
    /proc reaches nothing outside, and the run and the audit finish with every verdict kept."""
    names = ("a_first", "b_by_number", "c_everything", "d_last")
    hostile = {"b_by_number": KILLS_BY_NUMBER, "c_everything": KILLS_EVERYTHING}
    root = _checkout(tmp_path, {name: LESSON + "\n" + hostile.get(name, "") for name in names})
    out = tmp_path / "ev"
    done = _run(root, out, *names)
    assert done.returncode == 0, done.stdout + done.stderr
    assert (out / "SHA256SUMS").is_file()
    for name in names:
        result = json.loads((out / "scenarios" / name / "result.json").read_text(encoding="utf-8"))
        assert result["verdict"] == "PASS", (name, result["problem"])
    audited = _python(root, str(root / "audit.py"), str(out))
    assert audited.returncode == 0 and "result: OK" in audited.stdout, audited.stdout + audited.stderr
