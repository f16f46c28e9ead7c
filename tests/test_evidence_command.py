"""What the recorded command makes the folder hold, and the folder itself: forgeries an audit used to call OK.

Each test forges a folder ``run.py`` wrote the way an adversary did (records edited consistently, reports rendered
again, ``SHA256SUMS`` rewritten) and shows the audit names it. The command ``run.json`` records is parsed by the
lab's own parser, and which explorations and kill matrix it made is derived by re-execution from the scenarios'
code, never taken from the records.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console

from lab.evidence import audit
from tests.evidence_checkout import FROZEN, frozen_checkout
from tests.forging import edit_json, rerender, reseal

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import audit as audit_command  # noqa: E402  (audit.py and run.py live at the repository root)
import run  # noqa: E402

LINE = "explore/stdlib_lock_session/line.json"
INCOMPLETE = "explore/stdlib_lock_session/probe.json"
MATRIX = "explore/kill-matrix.json"


@pytest.fixture(scope="module", autouse=True)
def _frozen() -> Iterator[Path]:
    with frozen_checkout() as path:
        yield path


def _write(folder: Path, *words: str) -> Path:
    """``run.py WORDS --out folder``, its self-audit without re-execution (the tests re-execute what they need)."""
    import lab.evidence.write.writer as writer

    real = writer.audit
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(writer, "audit", lambda path, **options: real(path, **{**options, "rerun": False}))
        run.main([*words, "--out", str(folder)], console=Console(file=io.StringIO()))
    assert (folder / "SHA256SUMS").exists()
    return folder


@pytest.fixture(scope="module")
def explored(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Two scenarios explored at both granularities, with a kill matrix over race_two_requests, partial (the
    archive has other race scenarios)."""
    return _write(
        tmp_path_factory.mktemp("cmd") / "ev",
        "--explore", "--granularity", "both", "--scenario", "stdlib_lock_session", "--scenario", "race_two_requests",
    )  # fmt: skip


@pytest.fixture(scope="module")
def incomplete(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """stdlib_lock_session INCOMPLETE with a budget of 5 (the run FAILs), abba_deadlock PASS, no kill matrix."""
    return _write(
        tmp_path_factory.mktemp("cmd") / "ev",
        "--explore", "--max-schedules", "5", "--scenario", "stdlib_lock_session", "--scenario", "abba_deadlock",
    )  # fmt: skip


@pytest.fixture()
def ev(explored: Path, tmp_path: Path) -> Path:
    return Path(shutil.copytree(explored, tmp_path / "ev", symlinks=True))


def _drop_exploration(folder: Path, rel: str) -> None:
    (folder / rel).unlink()
    if not any((folder / rel).parent.iterdir()):
        (folder / rel).parent.rmdir()  # an empty folder is a problem of its own

    def change(run: dict[str, Any]) -> None:
        summary = run["exploration"]
        summary["explorations"] = [entry for entry in summary["explorations"] if entry["file"] != rel]
        verdicts = dict.fromkeys(summary["verdicts"], 0)
        for entry in summary["explorations"]:
            verdicts[entry["verdict"]] += 1
        summary["verdicts"] = verdicts

    edit_json(folder, "run.json", change)


def _forged(folder: Path) -> list[str]:
    rerender(folder)
    reseal(folder)
    assert audit(folder, rerun=False).ok, "the forgery is consistent: only what the command makes can tell"
    return [str(problem) for problem in audit(folder).problems]


@pytest.mark.timeout(120)
class TestTheCommandSaysWhatWasExplored:
    def test_the_genuine_folders_audit_ok(self, explored: Path, incomplete: Path) -> None:
        for folder in (explored, incomplete):
            report = audit(folder)
            assert report.ok, report.problems

    def test_a_dropped_exploration_and_kill_matrix_are_missing(self, ev: Path) -> None:
        """f4: one line-granularity record and the whole kill matrix deleted, run.json adjusted."""
        _drop_exploration(ev, LINE)
        (ev / MATRIX).unlink()
        edit_json(ev, "run.json", lambda run: run["exploration"].update(kill_matrix=None))
        assert _forged(ev) == [
            "explore/stdlib_lock_session/: missing: the command run.json records explores stdlib_lock_session at line",
            f"{MATRIX}: missing: the command run.json records builds a kill matrix over race_two_requests",
        ]

    def test_a_dropped_incomplete_exploration_cannot_turn_fail_into_pass(
        self, incomplete: Path, tmp_path: Path
    ) -> None:
        """f5: the INCOMPLETE record deleted, and the run's status made PASS."""
        ev = Path(shutil.copytree(incomplete, tmp_path / "ev"))
        assert json.loads((ev / "run.json").read_text())["status"] == "FAIL"
        _drop_exploration(ev, INCOMPLETE)
        edit_json(ev, "run.json", lambda run: run.update(status="PASS"))
        assert _forged(ev) == [
            "explore/stdlib_lock_session/: missing: the command run.json records explores stdlib_lock_session at probe"
        ]

    def test_kill_matrix_partial_is_derived_not_handed_over(self, ev: Path) -> None:
        """f11: ``partial`` decides which problems the matrix has; the child used to be handed the recorded one."""
        from lab.evidence.records.exploration import matrix_from_record

        def change(record: dict[str, Any]) -> None:
            record["partial"] = False
            record["problems"] = list(matrix_from_record(record).problems())
            record["ok"] = not record["problems"]

        edit_json(ev, MATRIX, change)
        kill = json.loads((ev / MATRIX).read_text())
        edit_json(ev, "run.json", lambda run: run["exploration"]["kill_matrix"].update(
            ok=kill["ok"], problems=kill["problems"]))  # fmt: skip
        if not kill["ok"]:
            edit_json(ev, "run.json", lambda run: run.update(status="FAIL"))
        problems = _forged(ev)
        assert [p for p in problems if "partial" in p] == [
            f"{MATRIX}: re-execution gave partial true; recorded false (partial: the run's race scenarios are not all "
            "the archive's)"
        ]

    def test_settings_and_exploring_at_all_are_the_commands(self, ev: Path) -> None:
        """A summary whose settings are not the ones the command's flags make, or a command that does not explore."""
        edit_json(ev, "run.json", lambda run: run["exploration"]["settings"].update(max_schedules=6))
        reseal(ev)
        reasons = [p.reason for p in audit(ev, rerun=False).problems if p.file == "run.json"]
        assert any(reason.startswith("its exploration settings") for reason in reasons), reasons
        edit_json(ev, "run.json", lambda run: run.update(command=["run.py", "--out", "x"]))
        reseal(ev)
        reasons = [p.reason for p in audit(ev, rerun=False).problems if p.file == "run.json"]
        assert "has an exploration summary, but its command (run.py --out x) does not explore" in reasons


@pytest.fixture(scope="module")
def small(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A checkout of the lab and two scenarios, one failing (``fails``)."""
    root = tmp_path_factory.mktemp("small") / "checkout"
    shutil.copytree(FROZEN, root)
    shutil.rmtree(root / "scenarios")
    (root / "scenarios").mkdir()
    for name, expect in (("fails", "COMMITTED"), ("passes", "DONE")):
        (root / "scenarios" / f"{name}.py").write_text(
            f'"""A scenario that {name}."""\n\nfrom lab import Scenario, actor, only\n\n\nclass It(Scenario):\n'
            f'    source = "tests"\n    outcomes = only(a="{expect}")\n\n'
            "    @actor\n    def a(self) -> object:\n        return 'DONE'\n",
            encoding="utf-8",
        )
    return root


@pytest.fixture()
def failing(small: Path, tmp_path: Path) -> Path:
    """A full run of ``small`` (it FAILs), with the failing scenario deleted and run.json made to add up."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(run, "ROOT", small)
        patch.setattr(run, "SCENARIOS", small / "scenarios")
        folder = _write(tmp_path / "ev")
    shutil.rmtree(folder / "scenarios" / "fails")

    def change(record: dict[str, Any]) -> None:
        passes = json.loads((folder / "scenarios" / "passes" / "result.json").read_text())
        record.update(scenarios=["passes"], scenario_count=1, status="PASS", transport_calls=0,
                      checks={"passed": len(passes["checks"]), "failed": 0},
                      verdicts={"PASS": 1, "FAIL": 0, "ERROR": 0, "SKIPPED": 0})  # fmt: skip

    edit_json(folder, "run.json", change)
    return folder


@pytest.mark.timeout(60)
class TestACommandItCannotParseIsNotBelieved:
    @pytest.mark.parametrize(
        "command", [["python3", "run.py", "--out", "x"], [], ["run.py", "--replay", "x:1"], ["run.py", "--bogus"]]
    )
    def test_a_command_that_writes_no_folder_is_a_problem(self, failing: Path, small: Path, command: list[str]) -> None:
        """f6b: the selection check used to be skipped for any command not starting with run.py or lab."""
        edit_json(failing, "run.json", lambda run: run.update(command=command))
        rerender(failing)
        reseal(failing)
        reasons = [p.reason for p in audit(failing, checkout=small, rerun=False).problems if p.file == "run.json"]
        assert len(reasons) == 1 and "is not one run.py or lab run/explore accepts" in reasons[0], reasons

    def test_a_scenario_the_rewritten_command_leaves_out_is_named(self, failing: Path, small: Path) -> None:
        """f6: the command rewritten to name every other scenario is a command run.py accepts, and the folder is
        then exactly what that command writes; what no check can tell apart is at least never silent: the
        archived scenario it leaves out is named in the report."""
        edit_json(failing, "run.json", lambda run: run.update(command=["run.py", "--scenario", "passes", "--out", "x"]))
        rerender(failing)
        reseal(failing)
        report = audit(failing, checkout=small)
        assert report.ok, report.problems
        assert report.rerun.note.endswith("archived but not selected by its command, so neither run nor checked: fails")


@pytest.mark.timeout(60)
class TestAcceptedDriftStillChecksTheReports:
    def test_an_edited_report_is_caught_with_drift_in_audit_py(self, failing: Path, small: Path) -> None:
        """f7: a comment added to the archived audit.py (re-fingerprinted) used to switch the report check off."""
        shutil.rmtree(failing)
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(run, "ROOT", small)
            patch.setattr(run, "SCENARIOS", small / "scenarios")
            folder = _write(failing)
        script = folder / "sources" / "audit.py"
        script.write_text(script.read_text() + "# reformatted\n")
        sources = json.loads((folder / "sources.json").read_text())
        for entry in sources["files"]:
            entry["sha256"] = hashlib.sha256((folder / "sources" / entry["path"]).read_bytes()).hexdigest()
        lines = "".join(f"{e['sha256']}  {e['path']}\n" for e in sources["files"])
        sources["combined_sha256"] = hashlib.sha256(lines.encode()).hexdigest()
        (folder / "sources.json").write_text(json.dumps(sources, sort_keys=True, indent=2) + "\n")
        for name in ("report.md", "report.html"):
            (folder / name).write_text((folder / name).read_text().replace("FAIL", "PASS"))
        reseal(folder)
        report = audit(folder, checkout=small, accept_drift=True)
        assert report.accepted_drift == ("audit.py",)
        assert sorted(p.file for p in report.problems) == ["report.html", "report.md"]


@pytest.mark.timeout(60)
class TestTheFolderItself:
    @pytest.fixture()
    def one(self, small: Path, tmp_path: Path) -> Path:
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(run, "ROOT", small)
            patch.setattr(run, "SCENARIOS", small / "scenarios")
            return _write(tmp_path / "ev", "--scenario", "passes")

    def test_a_hard_linked_sums_file_is_named_and_never_read(self, one: Path, small: Path, tmp_path: Path) -> None:
        """f10: SHA256SUMS hard-linked to a secret file had its lines printed among the problems."""
        secret = tmp_path / "secret.txt"
        secret.write_text("sk-do-not-print-1234\n")
        (one / "SHA256SUMS").unlink()
        os.link(secret, one / "SHA256SUMS")
        report = audit(one, checkout=small, rerun=False)
        assert [p.file for p in report.problems] == ["SHA256SUMS"]
        assert "hard links" in report.problems[0].reason and "sk-do-not" not in json.dumps(report.to_json())

    def test_a_hard_link_among_the_records_is_not_read(self, one: Path, small: Path, tmp_path: Path) -> None:
        os.link(one / "run.json", tmp_path / "elsewhere.json")
        report = audit(one, checkout=small, rerun=False)
        assert "run.json: has 2 hard links" in str(report.problems[0]) and not report.ok

    def test_a_signature_that_is_a_link_is_a_problem(self, one: Path, small: Path) -> None:
        """The signature was skipped by name, whatever it was: a symbolic link to /etc/passwd audited OK."""
        (one / "SHA256SUMS.sig").symlink_to("/etc/passwd")
        report = audit(one, checkout=small, rerun=False)
        assert [str(p) for p in report.problems] == [
            "SHA256SUMS.sig: is a symbolic link: an evidence folder holds only regular files; not followed"
        ]

    def test_an_empty_folder_is_a_problem(self, one: Path, small: Path) -> None:
        (one / "explore" / "nothing").mkdir(parents=True)
        report = audit(one, checkout=small, rerun=False)
        assert [str(p) for p in report.problems] == [
            "explore/nothing/: is an empty folder: an evidence folder holds none"
        ]


@pytest.mark.timeout(60)
class TestTheCommandLine:
    @pytest.mark.parametrize("words", [[""], [".", "--checkout", ""], [".", "--checkout="]])
    def test_an_empty_path_is_refused(self, words: list[str], capsys: pytest.CaptureFixture[str]) -> None:
        """``Path("")`` is the current folder: ``audit.py ""`` audited whatever folder it ran in."""
        assert audit_command.main(words) == 2
        assert "an empty path names no file or folder" in capsys.readouterr().err

    def test_a_full_disk_is_one_line_and_no_traceback(self, explored: Path) -> None:
        with open("/dev/full", "w") as full:
            done = subprocess.run(
                [sys.executable, str(FROZEN / "audit.py"), str(explored), "--no-rerun"],
                stdout=full, stderr=subprocess.PIPE, text=True, timeout=60,
                env={**os.environ, "PYTHONPATH": str(FROZEN)},
            )  # fmt: skip
        assert done.returncode == 1
        assert done.stderr.strip().splitlines() == [
            "audit.py: cannot write its output: No space left on device; the result was not shown"
        ]

    def test_a_reader_that_goes_away_is_exit_141(self, explored: Path) -> None:
        """rich answers a broken pipe with SystemExit(1), which said "problems found" of a passing audit."""
        child = subprocess.Popen(
            [sys.executable, str(FROZEN / "audit.py"), str(explored), "--no-rerun"],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env={**os.environ, "PYTHONPATH": str(FROZEN)},
        )  # fmt: skip
        assert child.stdout is not None and child.stderr is not None
        child.stdout.close()  # the reader goes away before a line is read
        assert child.wait(timeout=60) == 141, child.stderr.read()
        child.stderr.close()
