"""One scenario cannot harm another: every scenario file runs in a worker process of its own.

Each hostile file below used to take the whole run down or falsify another scenario's result: ``os._exit(0)`` in an
actor exited run.py 0 with an empty folder; a non-daemon thread kept run.py from ever exiting; a patch made at import
turned another scenario's FAIL into PASS; a crash ended everything; output was captured without bound. Now each one
is at worst its own ERROR with a one-line reason, the others run on, and the evidence (re-execution included)
verifies.
"""

from __future__ import annotations

import io
import json
import shutil
import sys
from pathlib import Path

import pytest
from rich.console import Console

from lab.evidence import audit
from lab.evidence.reexecute import isolation
from lab.evidence.reexecute.isolation import Job, run_files
from tests.evidence_checkout import FROZEN

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import run  # noqa: E402  (run.py lives at the repository root)


def _scenario(body: str, *, header: str = "", expect: str = "DONE") -> str:
    return (
        f'"""A hostile scenario of the isolation tests."""\n\n{header}\nfrom lab import Scenario, actor, only\n\n\n'
        "class Hostile(Scenario):\n"
        '    source = "tests/test_evidence_isolation.py"\n'
        f'    outcomes = only(a="{expect}", b="DONE")\n\n'
        f"    @actor\n    def a(self) -> object:\n{body}\n        return 'DONE'\n\n"
        "    @actor\n    def b(self) -> object:\n        return 'DONE'\n"
    )


HOSTILE = {
    "a_exits": _scenario("        import os\n        os._exit(0)"),
    "b_patches": _scenario(
        "        pass",
        header="import lab.scenarios.runner as _runner\n\n"
        "_runner._grade = lambda *args: (_runner.Check('patched', True),)  # every verdict PASS\n",
    ),
    "c_aborts": _scenario("        import os\n        os.abort()"),
    "d_prints": _scenario(
        "        import sys\n        for _ in range(2000):\n            sys.stdout.write('x' * 1000)"
    ),
    "e_leaks": _scenario(
        "        pass",
        header="import threading\nimport time\n\nthreading.Thread(target=time.sleep, args=(3600,)).start()\n",
    ),
    "f_fails": _scenario("        pass", expect="COMMITTED"),
}


@pytest.fixture(scope="module")
def checkout(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The lab, and the hostile scenarios instead of the lessons."""
    root = tmp_path_factory.mktemp("hostile")
    shutil.copytree(FROZEN / "lab", root / "lab")
    (root / "scenarios").mkdir()
    for name, text in HOSTILE.items():
        (root / "scenarios" / f"{name}.py").write_text(text, encoding="utf-8")
    return root


@pytest.mark.slow
@pytest.mark.timeout(60)
def test_a_hostile_scenario_harms_only_itself(
    checkout: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Every file is recorded; the hostile ones are ERROR with their reason; the failing one still FAILs; the
    self-audit (which re-executes each one in its worker again) and an independent audit agree."""
    monkeypatch.setattr(run, "ROOT", checkout)
    monkeypatch.setattr(run, "SCENARIOS", checkout / "scenarios")
    folder = tmp_path / "ev"
    out = io.StringIO()
    assert run.main(["--out", str(folder)], console=Console(file=out, width=200)) == 1
    assert "self-audit ok" in out.getvalue(), (folder / "audit.json").read_text()
    assert 0 < capsys.readouterr().err.count("x") <= 1 << 20  # what it printed, up to the cap
    results = {name: json.loads((folder / "scenarios" / name / "result.json").read_text()) for name in HOSTILE}
    assert {name: r["verdict"] for name, r in results.items()} == {
        "a_exits": "ERROR",
        "b_patches": "PASS",
        "c_aborts": "ERROR",
        "d_prints": "ERROR",
        "e_leaks": "PASS",
        "f_fails": "FAIL",
    }
    assert results["a_exits"]["problem"] == "its worker ended (exit code 0) before it reported a result"
    assert results["c_aborts"]["problem"] == "its worker was killed by SIGABRT before it reported a result"
    assert results["d_prints"]["problem"] == "it printed more than 1 MiB; stopped"
    report = audit(folder, checkout=checkout, rerun=False)
    assert report.ok and report.run_status == "FAIL", report.problems


@pytest.mark.timeout(30)
def test_a_worker_that_never_finishes_is_stopped(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A file that loops at import: its worker is stopped at its limit, and the next file still runs (with a
    generous limit of its own: at 0.01 s, a worker's start on a loaded machine was stopped too)."""
    monkeypatch.setattr(isolation, "GRACE_SECONDS", 0.05)
    (tmp_path / "loops.py").write_text('"""Loops."""\nwhile True:\n    pass\n', encoding="utf-8")
    (tmp_path / "plain.py").write_text(_scenario("        pass"), encoding="utf-8")
    loops, plain = run_files([Job(tmp_path / "loops.py", 0.01), Job(tmp_path / "plain.py", 30.0)], parallel=1)
    assert loops.problem == "its worker did not finish within 0.08 s; stopped"  # type: ignore[union-attr]
    assert str(plain.verdict) == "PASS"  # type: ignore[union-attr]


@pytest.mark.timeout(30)
def test_results_are_what_the_scenario_reported_in_order(tmp_path: Path) -> None:
    """Run in workers, two at once, the results come back in the jobs' order, equal to an in-process run's."""
    from lab.engine.core import encode_trace
    from lab.scenarios.loader import LoadedScenario, load
    from lab.scenarios.runner import run_scenario

    paths = [FROZEN / "scenarios" / f"{name}.py" for name in ("out_of_order_commit", "race_two_requests")]
    isolated = run_files([Job(path, 10.0) for path in paths], parallel=2)
    for path, result in zip(paths, isolated, strict=True):
        loaded = load(path)
        assert isinstance(loaded, LoadedScenario)
        direct = run_scenario(loaded)
        assert result.name == direct.name  # type: ignore[union-attr]
        assert encode_trace(result.trace) == encode_trace(direct.trace)  # type: ignore[union-attr]
        assert (result.outcomes, result.verdict, result.checks, result.requests) == (  # type: ignore[union-attr]
            direct.outcomes,
            direct.verdict,
            direct.checks,
            direct.requests,
        )
