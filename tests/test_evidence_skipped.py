"""A scenario that cannot run on the machine (a server it needs is missing) is a SKIPPED verdict in the evidence.

It is neither passed nor dropped: result.json says SKIPPED with the reason, run.json counts it, the run's status
is not failed by it, the audit re-executes it to the same SKIPPED, and an edit that turns it into a pass is caught.
Each result also says which store its sessions used.
"""

from __future__ import annotations

import hashlib
import json
import shutil
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from lab.evidence import audit, create_evidence_folder, write_evidence
from lab.scenarios.loader import LoadedScenario, load
from lab.scenarios.runner import Verdict, run_scenario

ROOT = Path(__file__).resolve().parent.parent

NEEDS_A_SERVER = '''"""Needs a server this machine does not have, so it is skipped.

A scenario of the evidence tests.
"""

from lab import Scenario, actor
from lab.errors import Unavailable


class NeedsAServer(Scenario):
    source = "tests/test_evidence_skipped.py"

    def setup(self) -> None:
        raise Unavailable("no frobnicator server on this machine")

    @actor
    def a(self) -> None:
        pass
'''

RUNS = '''"""Runs anywhere: one actor, one versioned session in memory.

A scenario of the evidence tests.
"""

from lab import Scenario, VersionedSession, actor, only


class Runs(Scenario):
    source = "tests/test_evidence_skipped.py"
    outcomes = only(a="DONE")

    def setup(self) -> None:
        self.session = VersionedSession("s1")

    @actor
    def a(self) -> None:
        pass
'''


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A small checkout: the lab and the two scenarios (the audits below judge against it)."""
    root = tmp_path_factory.mktemp("checkout")
    shutil.copytree(ROOT / "lab", root / "lab", ignore=shutil.ignore_patterns("__pycache__"))
    (root / "scenarios").mkdir()
    (root / "scenarios" / "needs_a_server.py").write_text(NEEDS_A_SERVER, encoding="utf-8")
    (root / "scenarios" / "runs.py").write_text(RUNS, encoding="utf-8")
    return root


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory, root: Path) -> Path:
    """A folder of two scenarios, one of them skipped, written and self-audited by the current code."""
    results = []
    for name in ("needs_a_server", "runs"):
        loaded = load(root / "scenarios" / f"{name}.py")
        assert isinstance(loaded, LoadedScenario), loaded
        results.append(run_scenario(loaded))
    out = create_evidence_folder(tmp_path_factory.mktemp("ev") / "ev")
    now = datetime.now(UTC)
    report = write_evidence(out, results, [], root=root, command=["run.py", "--out", str(out)], started=now, ended=now)
    assert report.ok, report.problems
    assert report.rerun.status == "MATCHED", report.rerun.note
    return out


def _json(path: Path) -> Any:
    return json.loads(path.read_text(encoding="utf-8"))


def _edit(folder: Path, rel: str, change: Callable[[dict[str, Any]], None]) -> None:
    """Change one record, write it back as the lab writes JSON, and cover the tracks in SHA256SUMS."""
    record = _json(folder / rel)
    change(record)
    data = (json.dumps(record, sort_keys=True, ensure_ascii=False, indent=2) + "\n").encode("utf-8")
    (folder / rel).write_bytes(data)
    lines = (folder / "SHA256SUMS").read_text(encoding="utf-8").splitlines()
    sums = [f"{hashlib.sha256(data).hexdigest()}  {rel}" if line.endswith(f"  {rel}") else line for line in lines]
    (folder / "SHA256SUMS").write_text("\n".join(sums) + "\n", encoding="utf-8")


@pytest.mark.timeout(60)
class TestSkipped:
    @pytest.mark.slow
    def test_the_result_is_skipped_with_its_reason(self, folder: Path) -> None:
        record = _json(folder / "scenarios" / "needs_a_server" / "result.json")
        assert (record["verdict"], record["run_status"], record["checks"]) == ("SKIPPED", "NOT_RUN", [])
        assert record["problem"] == "no frobnicator server on this machine"

    def test_the_run_counts_it_and_is_not_failed_by_it(self, folder: Path) -> None:
        run = _json(folder / "run.json")
        assert run["verdicts"] == {"PASS": 1, "FAIL": 0, "ERROR": 0, "SKIPPED": 1}
        assert run["status"] == "PASS" and run["scenarios"] == ["needs_a_server", "runs"]

    def test_each_result_names_its_store(self, folder: Path) -> None:
        assert _json(folder / "scenarios" / "runs" / "result.json")["store"] == "memory"
        assert _json(folder / "scenarios" / "needs_a_server" / "result.json")["store"] == ""

    def test_the_report_says_why_it_did_not_run(self, folder: Path) -> None:
        report = (folder / "report.md").read_text(encoding="utf-8")
        assert "Verdict: **SKIPPED** (run NOT_RUN). Not run: no frobnicator server on this machine." in report

    def test_a_skip_turned_into_a_pass_is_caught(self, folder: Path, root: Path, tmp_path: Path) -> None:
        """Rewriting the verdict, the run's counts and the sums consistently still leaves a pass with no check
        (the reports, rendered from the records as they were, differ too)."""
        ev = Path(shutil.copytree(folder, tmp_path / "ev"))
        _edit(ev, "scenarios/needs_a_server/result.json", lambda r: r.update(verdict="PASS"))
        _edit(ev, "run.json", lambda r: r.update(verdicts={"PASS": 2, "FAIL": 0, "ERROR": 0, "SKIPPED": 0}))
        problems = [str(p) for p in audit(ev, rerun=False, checkout=root).problems]
        assert [p for p in problems if not p.startswith("report.")] == [
            "scenarios/needs_a_server/result.json: verdict is PASS, but 0 of 0 checks failed",
            "scenarios/needs_a_server/trace.jsonl: has no final event, though the scenario ran to a verdict",
        ]

    def test_a_skip_that_claims_checks_is_caught(self, folder: Path, root: Path, tmp_path: Path) -> None:
        ev = Path(shutil.copytree(folder, tmp_path / "ev"))
        check = {"name": "it ran", "passed": True, "reason": "", "kind": "run"}
        _edit(ev, "scenarios/needs_a_server/result.json", lambda r: r.update(checks=[check]))
        _edit(ev, "run.json", lambda r: r["checks"].update(passed=r["checks"]["passed"] + 1))
        problems = [str(p) for p in audit(ev, rerun=False, checkout=root).problems]
        assert [p for p in problems if not p.startswith("report.")] == [
            "scenarios/needs_a_server/result.json: verdict is SKIPPED, but it has checks, a run status other than "
            "NOT_RUN, or no reason"
        ]

    def test_a_folder_from_before_skipped_still_audits(self, folder: Path, root: Path, tmp_path: Path) -> None:
        """Older folders count no SKIPPED verdict in run.json, and have no store: both are fine."""
        ev = Path(shutil.copytree(folder, tmp_path / "ev"))
        shutil.rmtree(ev / "scenarios" / "needs_a_server")
        _edit(ev, "scenarios/runs/result.json", lambda r: r.pop("store"))

        def older(run: dict[str, Any]) -> None:
            run.update(scenarios=["runs"], scenario_count=1, verdicts={"PASS": 1, "FAIL": 0, "ERROR": 0})

        _edit(ev, "run.json", older)
        sums = (ev / "SHA256SUMS").read_text(encoding="utf-8").splitlines()
        kept = [line for line in sums if "scenarios/needs_a_server/" not in line]
        (ev / "SHA256SUMS").write_text("\n".join(kept) + "\n", encoding="utf-8")
        problems = [str(p) for p in audit(ev, rerun=False, checkout=root).problems]
        assert [p for p in problems if not p.startswith(("report.", "run.json: its command", "audit.json: "))] == []

    def test_the_runner_skips_on_unavailable(self) -> None:
        loaded = load(ROOT / "scenarios" / "row_lock_wait.py")
        assert isinstance(loaded, LoadedScenario)
        with pytest.MonkeyPatch.context() as patch:
            patch.delenv("LAB_POSTGRES_URL", raising=False)
            assert run_scenario(loaded).verdict is Verdict.SKIPPED
