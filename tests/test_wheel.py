"""The wheel, installed in a fresh venv outside the checkout, lists, runs, explores and audits a scenario folder.

This is what a person who ran ``pip install concurrency-lab`` has: no ``run.py``, no checkout, only the ``lab``
command and a folder of their own scenarios. It takes a minute (a wheel build, a venv, an install), so the default
run leaves it out (``-m wheel`` runs it; ``.ci/run`` does).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

import lab

ROOT = Path(__file__).resolve().parent.parent
SCENARIOS = ("out_of_order_commit", "race_two_requests")

pytestmark = [pytest.mark.wheel, pytest.mark.timeout(600)]


def _call(argv: list[str], cwd: Path, env: dict[str, str], timeout: float = 300) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout, check=False)
    assert "Traceback" not in done.stderr, done.stderr
    return done


def _build(tmp: Path) -> Path:
    """``pip wheel`` on a copy of what the wheel is made of (a build in the working tree would leave build/ in it)."""
    source = tmp / "source"
    shutil.copytree(ROOT / "lab", source / "lab", ignore=shutil.ignore_patterns("__pycache__"))
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, source / name)
    isolation = ["--no-build-isolation"] if _has("setuptools") and _has("wheel") else []  # else from the index
    done = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", str(source), "--no-deps", "-q", "-w", str(tmp / "dist"), *isolation],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    (wheel,) = (tmp / "dist").glob("*.whl")
    return wheel


def _has(module: str) -> bool:
    import importlib.util

    return importlib.util.find_spec(module) is not None


def _venv(tmp: Path, wheel: Path) -> Path:
    """A fresh venv with the wheel installed; ``rich`` from the package index (the pip cache), or, offline, seen
    through a ``.pth`` line naming the folder this interpreter has it in (that folder's own ``.pth`` files, which
    would put the checkout on the path, are not read)."""
    venv = tmp / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=120)
    pip = [str(venv / "bin" / "python"), "-m", "pip", "install", "-q", "--disable-pip-version-check"]
    online = subprocess.run([*pip, str(wheel)], capture_output=True, text=True, timeout=300, check=False)
    if online.returncode != 0:
        subprocess.run([*pip, "--no-deps", str(wheel)], check=True, timeout=300)
        import rich

        purelib = subprocess.run(
            [str(venv / "bin" / "python"), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
        Path(purelib, "lab-test-rich.pth").write_text(str(Path(rich.__file__).parent.parent) + "\n")
    return venv


def test_the_installed_wheel_lists_runs_explores_and_audits_a_scenario_folder(tmp_path: Path) -> None:
    """``lab --version``, ``lab list/run/explore --scenarios DIR`` and ``lab audit`` all exit 0, from a folder
    outside the checkout, with a lab that is not the checkout's."""
    wheel = _build(tmp_path)
    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
    assert "lab/py.typed" in names and "lab/cli/app.py" in names
    assert any(name.endswith("entry_points.txt") for name in names)
    venv = _venv(tmp_path, wheel)
    project = tmp_path / "project"
    (project / "scenarios").mkdir(parents=True)
    for name in SCENARIOS:
        shutil.copy(ROOT / "scenarios" / f"{name}.py", project / "scenarios" / f"{name}.py")
    env = {key: value for key, value in os.environ.items() if not key.startswith("PYTHON")}
    env["PATH"] = f"{venv / 'bin'}{os.pathsep}{env.get('PATH', '')}"
    command = str(venv / "bin" / "lab")

    version = _call([command, "--version"], project, env)
    assert version.returncode == 0 and version.stdout.startswith(f"lab {lab.__version__} (CPython "), version
    assert "installed in" in version.stdout, version  # the wheel's lab says where it lives
    where = _call([str(venv / "bin" / "python"), "-c", "import lab; print(lab.__file__)"], project, env)
    assert Path(where.stdout.strip()).is_relative_to(venv), where.stdout  # the wheel's lab, not the checkout's

    listed = _call([command, "list", "--scenarios", "scenarios"], project, env)
    assert listed.returncode == 0, listed.stderr
    assert all(name in listed.stdout for name in SCENARIOS)

    ran = _call([command, "run", "--scenarios", "scenarios", "--out", "ev"], project, env)
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert "self-audit ok" in ran.stdout
    assert sorted(p.name for p in (project / "ev" / "sources" / "scenarios").iterdir()) == [
        f"{name}.py" for name in SCENARIOS
    ]
    audited = _call([command, "audit", "ev"], project, env)
    assert audited.returncode == 0, audited.stdout + audited.stderr
    assert "MATCHED" in audited.stdout and "OK: everything verified" in audited.stdout

    explored = _call(
        [command, "explore", "--scenarios", "scenarios", "--scenario", "out_of_order_commit", "--out", "explored"],
        project,
        env,
    )
    assert explored.returncode == 0, explored.stdout + explored.stderr
    assert (project / "explored" / "explore" / "out_of_order_commit").is_dir()
    audited = _call([command, "audit", "explored"], project, env)
    assert audited.returncode == 0, audited.stdout + audited.stderr

    elsewhere = _call([command, "audit", str(project / "ev"), "--scenarios", str(project / "scenarios")], tmp_path, env)
    assert elsewhere.returncode == 0, elsewhere.stdout + elsewhere.stderr
