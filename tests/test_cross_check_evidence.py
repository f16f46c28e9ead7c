"""``--cross-check N`` end to end: on a program built to show a MODEL GAP, ``run.py --explore`` does not PASS and
exits 1, its folder audits OK, and a forger who drops what real threads reached, or keeps a MODEL GAP under a PASS,
is caught; a scenario that cannot be cross-checked is named with its reason, never skipped in silence.

The program (``exact_sleep``) asks the clock how long a 10 ms sleep took: on the lab's virtual clock exactly 10 ms,
on real threads always a little more. Every schedule reaches one outcome, every real run the other. It is built on
the clock, not on a race the recorder cannot see, because any such race is one the lab will learn to see.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from lab.commandline import parse_recorded
from lab.errors import UsageError
from lab.evidence import AuditReport, audit
from tests.evidence_checkout import FROZEN
from tests.forging import rerender, reseal, rewrite

EXACT_SLEEP = '''\
"""Built to show a MODEL GAP: an actor asks the clock how long a short sleep took."""

import time

from lab import Scenario, acceptable, actor


class ExactSleep(Scenario):
    source = "tests: a program whose real runs the model cannot reach"
    outcomes = (acceptable("the sleep took exactly as long as asked", overslept=False),)

    def setup(self) -> None:
        self.overslept = False

    @actor
    def sleeper(self) -> None:
        started = time.monotonic()
        time.sleep(0.01)
        self.overslept = round(time.monotonic() - started, 6) > 0.01

    @actor
    def other(self) -> None:
        pass

    def observe(self) -> dict[str, object]:
        return {"overslept": self.overslept}
'''
RUNS = 30
EXPLORATION = "explore/exact_sleep/line.json"
CHECK = "cross-check/exact_sleep/line.json"
NOT_CHECKED = "cross-check/deadline_cancels_request/line.json"
RUN = "run.json"


@pytest.fixture(scope="module")
def checkout(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The lab as it is, with two scenarios: the MODEL GAP program, and the shipped one that says it cannot be
    cross-checked."""
    root = tmp_path_factory.mktemp("checkout")
    shutil.copytree(FROZEN / "lab", root / "lab")
    for name in ("run.py", "audit.py", "pyproject.toml"):
        shutil.copy2(FROZEN / name, root / name)
    (root / "scenarios").mkdir()
    (root / "scenarios" / "exact_sleep.py").write_text(EXACT_SLEEP, encoding="utf-8")
    shutil.copy2(FROZEN / "scenarios" / "deadline_cancels_request.py", root / "scenarios")
    return root


def _command(root: Path, *words: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, *words],
        cwd=root,
        capture_output=True,
        text=True,
        timeout=240,
        env={**os.environ, "COLUMNS": "80"},
    )


@pytest.fixture(scope="module")
def made(checkout: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, subprocess.CompletedProcess[str]]:
    out = tmp_path_factory.mktemp("made") / "ev"
    words = ["run.py", "--explore", "--granularity", "line", "--cross-check", str(RUNS), "--out", str(out)]
    return out, _command(checkout, *words)


def _json(folder: Path, rel: str) -> Any:
    return json.loads((folder / rel).read_text(encoding="utf-8"))


@pytest.mark.slow
@pytest.mark.timeout(300)
class TestTheCommand:
    def test_a_model_gap_is_not_a_pass(self, made: tuple[Path, subprocess.CompletedProcess[str]]) -> None:
        folder, done = made
        assert done.returncode == 1, done.stdout + done.stderr
        assert all(len(line) <= 80 for line in done.stdout.splitlines()), done.stdout
        said = " ".join(done.stdout.split())  # wrapped at 80 columns
        assert f"cross-check exact_sleep (line): {RUNS} real runs, 1 outcome reached, 1 MODEL GAP" in said
        assert f"overslept=True, run=FINISHED, sleeper=DONE in {RUNS} of {RUNS} runs" in said
        assert "exploration exact_sleep (line) FAIL (MODEL GAP)" in said
        run = _json(folder, RUN)
        entry = next(e for e in run["exploration"]["explorations"] if e["file"] == EXPLORATION)
        assert run["status"] == "FAIL" and entry["verdict"] == "FAIL"
        assert entry["cross_check"] == {"file": CHECK, "runs": RUNS, "reached": 1, "model_gaps": 1, "not_checked": ""}
        assert _json(folder, EXPLORATION)["verdict"] == "PASS"  # the search's own record, replayed by the audit
        check = _json(folder, CHECK)
        assert check["verdict"] == "FAIL" and check["model_gaps"] == check["reached"]
        assert check["model_gaps"][0]["observed"]["overslept"] is True
        report = (folder / "report.md").read_text(encoding="utf-8")
        assert "| exact_sleep | - | line | FAIL (MODEL GAP) |" in report
        assert f"Cross-check: {RUNS} real runs, 1 outcome reached, MODEL GAP" in report
        assert "MODEL GAP" in (folder / "report.html").read_text(encoding="utf-8")

    def test_a_scenario_that_cannot_be_cross_checked_says_why(
        self, made: tuple[Path, subprocess.CompletedProcess[str]]
    ) -> None:
        folder, done = made
        said = " ".join(done.stdout.split())
        assert "not cross-checked: deadline_cancels_request (line): its outcome is a time" in said
        check = _json(folder, NOT_CHECKED)
        assert check["runs"] == 0 and check["reached"] == [] and "virtual clock" in check["not_checked"]
        assert "not cross-checked: its outcome is a time" in (folder / "report.md").read_text(encoding="utf-8")

    def test_its_folder_audits_ok(self, checkout: Path, made: tuple[Path, subprocess.CompletedProcess[str]]) -> None:
        folder, _ = made
        done = _command(checkout, "audit.py", str(folder))
        assert done.returncode == 0, done.stdout + done.stderr
        assert "result: OK" in done.stdout


def _forge(source: Path, tmp_path: Path, edit: Callable[[Path], None]) -> Path:
    folder = tmp_path / "forged"
    shutil.copytree(source, folder)
    edit(folder)
    rerender(folder)
    reseal(folder)
    return folder


def _caught(report: AuditReport, file: str, words: str) -> None:
    assert not report.ok
    assert any(p.file == file and words in p.reason for p in report.problems), report.problems


def _pass_it(folder: Path, check: dict[str, Any] | None) -> None:
    """run.json says the exploration PASSed, and the run with it, every total adjusted."""
    run = _json(folder, RUN)
    summary = run["exploration"]
    for entry in summary["explorations"]:
        if entry["file"] == EXPLORATION:
            entry["verdict"] = "PASS"
            if check is None:
                del entry["cross_check"]
            else:
                entry["cross_check"]["model_gaps"] = len(check["model_gaps"])
    verdicts = [entry["verdict"] for entry in summary["explorations"]]
    summary["verdicts"] = {word: verdicts.count(word) for word in summary["verdicts"]}
    run["status"] = "PASS" if all(v == "PASS" for v in run["verdicts"] if run["verdicts"][v]) else run["status"]
    rewrite(folder, RUN, run)


@pytest.mark.slow
@pytest.mark.timeout(300)
class TestForgeries:
    """Each forgery covers its tracks (:mod:`tests.forging`); the audit without re-execution catches it."""

    def _audit(self, folder: Path, checkout: Path) -> AuditReport:
        return audit(folder, rerun=False, checkout=checkout)

    def test_the_honest_folder_is_ok(self, checkout: Path, made: tuple[Path, Any]) -> None:
        report = self._audit(made[0], checkout)
        assert report.ok, report.problems

    def test_the_cross_check_dropped(self, checkout: Path, made: tuple[Path, Any], tmp_path: Path) -> None:
        def drop(folder: Path) -> None:
            (folder / CHECK).unlink()
            _pass_it(folder, None)

        _caught(self._audit(_forge(made[0], tmp_path, drop), checkout), CHECK, "missing: its command")

    def test_a_model_gap_kept_under_a_pass(self, checkout: Path, made: tuple[Path, Any], tmp_path: Path) -> None:
        def under(folder: Path) -> None:
            check = _json(folder, CHECK)
            check["verdict"] = "PASS"
            rewrite(folder, CHECK, check)
            _pass_it(folder, check)

        _caught(self._audit(_forge(made[0], tmp_path, under), checkout), CHECK, "verdict is PASS, but")

    def test_the_model_gap_unlisted(self, checkout: Path, made: tuple[Path, Any], tmp_path: Path) -> None:
        def unlisted(folder: Path) -> None:
            check = _json(folder, CHECK)
            check.update(verdict="PASS", model_gaps=[])
            rewrite(folder, CHECK, check)
            _pass_it(folder, check)

        _caught(self._audit(_forge(made[0], tmp_path, unlisted), checkout), CHECK, "lists 0 MODEL GAPs, but 1")

    def test_fewer_runs_than_the_command_asks(self, checkout: Path, made: tuple[Path, Any], tmp_path: Path) -> None:
        def fewer(folder: Path) -> None:
            check = _json(folder, CHECK)
            check["runs"] = check["reached"][0]["runs"] = check["model_gaps"][0]["runs"] = RUNS - 1
            rewrite(folder, CHECK, check)
            run = _json(folder, RUN)
            for entry in run["exploration"]["explorations"]:
                if entry["file"] == EXPLORATION:
                    entry["cross_check"]["runs"] = RUNS - 1
            rewrite(folder, RUN, run)

        _caught(self._audit(_forge(made[0], tmp_path, fewer), checkout), CHECK, "but its command (")

    def test_runs_that_do_not_add_up(self, checkout: Path, made: tuple[Path, Any], tmp_path: Path) -> None:
        def short(folder: Path) -> None:
            check = _json(folder, CHECK)
            check["reached"][0]["runs"] = check["model_gaps"][0]["runs"] = 3
            rewrite(folder, CHECK, check)

        _caught(self._audit(_forge(made[0], tmp_path, short), checkout), CHECK, "its outcomes were reached in 3 runs")

    def test_a_reason_not_to_check_invented(self, checkout: Path, made: tuple[Path, Any], tmp_path: Path) -> None:
        def excuse(folder: Path) -> None:
            check = _json(folder, CHECK)
            check.update(runs=0, reached=[], model_gaps=[], verdict="PASS", not_checked="it is slow")
            rewrite(folder, CHECK, check)
            _pass_it(folder, check)
            run = _json(folder, RUN)
            for entry in run["exploration"]["explorations"]:
                if entry["file"] == EXPLORATION:
                    entry["cross_check"].update(runs=0, reached=0, not_checked="it is slow")
            rewrite(folder, RUN, run)

        _caught(self._audit(_forge(made[0], tmp_path, excuse), checkout), CHECK, "its archived source says nothing")

    def test_a_cross_check_the_command_does_not_make(
        self, checkout: Path, made: tuple[Path, Any], tmp_path: Path
    ) -> None:
        def plain(folder: Path) -> None:
            run = _json(folder, RUN)
            run["command"] = [word for word in run["command"] if word not in ("--cross-check", str(RUNS))]
            rewrite(folder, RUN, run)

        _caught(self._audit(_forge(made[0], tmp_path, plain), checkout), CHECK, "is a cross-check its command (")

    def test_an_unreadable_cross_check_is_not_called_missing(
        self, checkout: Path, made: tuple[Path, Any], tmp_path: Path
    ) -> None:
        def garble(folder: Path) -> None:
            (folder / CHECK).write_text("{not json", encoding="utf-8")

        report = self._audit(_forge(made[0], tmp_path, garble), checkout)
        reasons = [p.reason for p in report.problems if p.file == CHECK]
        assert reasons and not any(reason.startswith("missing") for reason in reasons), report.problems


class TestTheGrammar:
    def test_the_run_count_is_read_back_from_the_command(self) -> None:
        words = ["run.py", "--explore", "--cross-check", "7", "--out", "x"]
        assert parse_recorded(words).cross_check == 7
        assert parse_recorded(["lab", "explore", "--out", "x"]).cross_check == 0

    @pytest.mark.parametrize(
        ("words", "message"),
        [
            (["run.py", "--cross-check", "3", "--out", "x"], "--cross-check goes with --explore"),
            (["run.py", "--explore", "--cross-check", "-1", "--out", "x"], "--cross-check needs a number"),
            (["run.py", "--explore", "--cross-check", "many", "--out", "x"], "invalid int value"),
        ],
    )
    def test_a_bad_count_is_one_line(self, words: list[str], message: str) -> None:
        with pytest.raises(UsageError, match=message):
            parse_recorded(words)
