"""Every command the lab prints for pasting runs as printed: from the folder it was printed in, in a shell whose
PATH does not hold the lab's virtual environment, with the scenario folder and variant that selected the run."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from lab.render.commands import Invocation

ROOT = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent
_BARE = {"PATH": "/usr/bin:/bin", "HOME": os.environ.get("HOME", "/root"), "COLUMNS": "200"}


def _printed(lines: str, label: str) -> str:
    found = [line.split(label, 1)[1].strip() for line in lines.splitlines() if line.strip().startswith(label)]
    assert found, lines
    return found[0]


def _paste(command: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """Run ``command`` as a person pasting it would: a POSIX shell, outside the virtual environment."""
    return subprocess.run(["bash", "-c", command], cwd=cwd, env=_BARE, capture_output=True, text=True, timeout=120)


def _explore(program: list[str], cwd: Path) -> str:
    words = ["explore", "--scenarios", "my scenarios", "--scenario", "race_two_requests"]
    words += ["--variant", "CheckOutsideLockSession", "--out", "ev"]
    done = subprocess.run([*program, *words], cwd=cwd, capture_output=True, text=True, timeout=300, env=_BARE)
    return done.stdout


@pytest.fixture
def project(tmp_path: Path) -> Path:
    folder = tmp_path / "my scenarios"  # a space: the printed command must quote it
    folder.mkdir()
    shutil.copy(ROOT / "scenarios" / "race_two_requests.py", folder)
    return tmp_path


@pytest.mark.slow
@pytest.mark.timeout(600)
@pytest.mark.parametrize("program", ["lab", "python -m lab"])
def test_a_replay_line_runs_as_printed(project: Path, program: str) -> None:
    started = [str(BIN / "lab")] if program == "lab" else [sys.executable, "-m", "lab"]
    out = _explore(started, project)
    for label in ("replay:", "allowed:"):
        command = _printed(out, label)
        assert "--scenarios 'my scenarios'" in command and "--variant CheckOutsideLockSession" in command
        pasted = _paste(command, project)
        assert pasted.returncode == 0, pasted.stderr
        assert "outcome:" in pasted.stdout


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_lab_new_in_an_empty_folder(tmp_path: Path) -> None:
    """``lab new`` makes ``scenarios/`` where the person stands; its file speaks of ``lab``, not ``run.py``, and the
    command it prints runs as printed."""
    done = subprocess.run(
        [str(BIN / "lab"), "new", "my_first"], cwd=tmp_path, env=_BARE, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    written = tmp_path / "scenarios" / "my_first.py"
    assert written.is_file() and "run.py" not in written.read_text()
    command = _printed(done.stdout.replace("\n    ", " "), "wrote").split("run it with:", 1)[1].strip()
    pasted = _paste(command, tmp_path)
    assert pasted.returncode == 0, pasted.stdout + pasted.stderr
    assert (tmp_path / "try-my_first" / "run.json").is_file()


def test_each_program_spells_its_own_replay() -> None:
    """``run.py`` replays with a flag and reads its own folder; the others take the folder named, quoted."""
    run_py = Invocation("python run.py", "s")
    assert run_py.replay("r", "0:01", "line", "V") == "python run.py --replay r:0:01 --granularity line --variant V"
    lab = Invocation("lab", "a b")
    assert lab.replay("r", "0:01", "probe", "") == "lab replay r:0:01 --scenarios 'a b'"
    assert lab.run("r", "try-r") == "lab run --scenario r --out try-r --scenarios 'a b'"
