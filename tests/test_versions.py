"""The same explorations on every Python the machine has: schedules and outcome counts do not depend on the version.

The lab rewrites the modules under test from their syntax trees and resolves names with ``symtable``, both of
which change between Python versions (3.12 inlines comprehensions, for one). Each other CPython found on the path
(3.12, 3.13) explores the same scenarios in a subprocess, and its counts must equal this interpreter's.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from lab.scenarios.exploring import explore_scenario
from lab.scenarios.loader import LoadedScenario, load

ROOT = Path(__file__).resolve().parent.parent
CASES = (
    ("scenarios/race_two_requests.py", "probe"),
    ("scenarios/race_two_requests.py", "line"),
    ("scenarios/race_two_requests.py", "instruction"),
    ("tests/soundness/three_actors.py", "line"),
    ("tests/soundness/closure_list.py", "instruction"),
)

_PROGRAM = textwrap.dedent("""
    import json, sys
    from pathlib import Path
    sys.path.insert(0, sys.argv[1])
    from lab.scenarios.exploring import explore_scenario
    from lab.scenarios.loader import load
    found = {}
    for path, granularity in json.loads(sys.argv[2]):
        result = explore_scenario(load(Path(sys.argv[1]) / path), granularity=granularity)
        found[f"{path}:{granularity}"] = [str(result.verdict), result.schedules, result.pruned, result.outcomes]
    print(json.dumps(found, sort_keys=True))
""")


def _here() -> dict[str, object]:
    found: dict[str, object] = {}
    for path, granularity in CASES:
        loaded = load(ROOT / path)
        assert isinstance(loaded, LoadedScenario), str(loaded)
        result = explore_scenario(loaded, granularity=granularity)
        found[f"{path}:{granularity}"] = [str(result.verdict), result.schedules, result.pruned, result.outcomes]
    return found


def _interpreter(version: str) -> str | None:
    """A working ``python{version}``: on the path, or installed by pyenv (whose shims may refuse to run it)."""
    candidates = [shutil.which(f"python{version}")]
    candidates += sorted(str(p) for p in Path.home().glob(f".pyenv/versions/{version}.*/bin/python{version}"))
    for candidate in candidates:
        if (
            candidate
            and subprocess.run([candidate, "-c", "import sys"], capture_output=True, timeout=30, check=False).returncode
            == 0
        ):
            return candidate
    return None


def _others() -> list[str]:
    mine = f"{sys.version_info.major}.{sys.version_info.minor}"
    return [version for version in ("3.11", "3.12", "3.13") if version != mine]


@pytest.mark.slow
@pytest.mark.timeout(120)
@pytest.mark.parametrize("version", _others())
def test_every_python_explores_alike(version: str) -> None:
    python = _interpreter(version)
    if python is None:
        pytest.skip(f"no working python{version} on this machine to compare with")
    done = subprocess.run(
        [python, "-c", _PROGRAM, str(ROOT), json.dumps(CASES)], capture_output=True, text=True, timeout=100, check=False
    )
    if done.returncode != 0 and "No module named" in done.stderr:
        pytest.skip(f"python{version} lacks what the lab imports: {done.stderr.strip().splitlines()[-1]}")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == json.loads(json.dumps(_here())), f"python{version} explored differently"
