"""Honest edges of run.py and audit.py: bounded numbers, Ctrl-C, a full disk, hostile text, sys.exit in an actor.

Each test is a regression test for one defect of issue 10 ("Why"), and none re-executes a folder in a child
process (the self-audit's re-execution is switched off where a folder is written), so together they take well
under a second.
"""

from __future__ import annotations

import errno
import io
import json
import math
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console

from lab.evidence.records import schema
from lab.scenarios.loader import LoadedScenario, load
from lab.scenarios.runner import run_scenario
from tests.evidence_checkout import frozen_checkout

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import audit as audit_command  # noqa: E402  (audit.py and run.py live at the repository root)
import lab.campaign.campaign as campaign  # noqa: E402  (what run.py runs: its workers, its writer)
import lab.cli.audit as audit_cli  # noqa: E402  (what audit.py runs)
import run  # noqa: E402

SCENARIO = "out_of_order_commit"
CONTROL = ("\x1b", "\x07", "\x9b", "\r", "\u202e")
"""Characters that must never reach a terminal from an archive: ESC, BEL, the C1 CSI, CR and a bidi override."""


@pytest.fixture(scope="module", autouse=True)
def _frozen() -> Iterator[Path]:
    """Write from, and audit against, one frozen copy of the checkout (see tests/evidence_checkout.py)."""
    with frozen_checkout() as path:
        yield path


def _run(argv: list[str]) -> int:
    return run.main(argv, console=Console(file=io.StringIO(), width=200))


def _audit(*args: str) -> tuple[int, str]:
    out = io.StringIO()
    code = audit_command.main(list(args), console=Console(file=out, soft_wrap=True, width=200))
    return code, out.getvalue()


def _no_self_reexecution(monkeypatch: pytest.MonkeyPatch) -> None:
    """The writer's self-audit without its child process: these tests are about what happens around it."""
    import lab.evidence.write.writer as writer

    real = writer.audit
    monkeypatch.setattr(writer, "audit", lambda folder, **options: real(folder, **{**options, "rerun": False}))


def _one_line(err: str, prefix: str) -> None:
    assert err.count("\n") == 1 and err.startswith(prefix) and "Traceback" not in err, err


class TestNumbers:
    @pytest.mark.parametrize("value", ["nan", "inf", "-inf", "0", "-1", "1e300", "0.001"])
    def test_a_watchdog_outside_its_range_is_one_line(
        self, value: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
    ) -> None:
        """nan and inf used to be accepted, so a blocked actor was never reported; nothing is written."""
        assert _run(["--out", str(tmp_path / "ev"), f"--watchdog={value}"]) == 2
        _one_line(capsys.readouterr().err, "run.py: --watchdog needs a number of seconds from 0.01 to 3600")
        assert not (tmp_path / "ev").exists()

    @pytest.mark.parametrize("value", ["nan", "inf", "1e300", "0", "-5"])
    def test_a_timeout_outside_its_range_is_one_line(
        self, value: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
    ) -> None:
        """nan, inf and 1e300 used to end in a traceback from subprocess."""
        assert _audit(str(tmp_path), "--timeout", value)[0] == 2
        _one_line(capsys.readouterr().err, "audit.py: --timeout needs a number of seconds from 0.001 to 86400")

    def test_nan_in_a_record_is_a_problem_not_a_number(self) -> None:
        """Python's JSON reader accepts NaN and Infinity; the evidence reader names them."""
        from lab.evidence.records.records import parse_json

        for text in (b'{"seconds": NaN}', b"[Infinity]", b"[-Infinity]"):
            with pytest.raises(ValueError, match="is not a JSON number"):
                parse_json(text)


class TestInterrupted:
    def test_ctrl_c_during_a_run_is_exit_130_and_an_unfinished_folder(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
    ) -> None:
        """One line, exit 130; the folder holds started.json and the sources read before any scenario ran, and
        audit.py calls it an unfinished run (it used to say "not an evidence folder")."""

        def interrupted(*args: Any, **kwargs: Any) -> Any:
            raise KeyboardInterrupt

        monkeypatch.setattr(campaign, "run_files", interrupted)
        folder = tmp_path / "ev"
        assert _run(["--out", str(folder), "--scenario", SCENARIO]) == 130
        _one_line(capsys.readouterr().err, f"run.py: interrupted; {folder} is left unfinished")
        assert sorted(p.name for p in folder.iterdir()) == ["sources", "sources.json", "started.json"]
        code, out = _audit(str(folder))
        assert code == 1
        assert "PROBLEM SHA256SUMS: missing: the run did not finish writing this folder" in out
        assert out.rstrip().endswith(
            "result: UNFINISHED: the run that wrote this folder did not finish; nothing was verified"
        )

    def test_ctrl_c_during_an_audit_is_exit_130(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
    ) -> None:
        """No traceback."""

        def interrupted(*args: Any, **kwargs: Any) -> Any:
            raise KeyboardInterrupt

        monkeypatch.setattr(audit_cli, "audit", interrupted)
        assert _audit(str(tmp_path))[0] == 130
        _one_line(capsys.readouterr().err, "audit.py: interrupted")


class TestCannotWrite:
    def test_a_full_disk_is_one_line(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
    ) -> None:
        """ENOSPC while writing: exit 3, one line naming the file; the folder audits as unfinished."""
        import lab.evidence.write.files as writer

        real_open = open

        def full(path: Any, mode: str = "r", *args: Any, **kwargs: Any) -> Any:
            if "x" in mode and str(path).endswith("run.json"):
                raise OSError(errno.ENOSPC, "No space left on device")
            return real_open(path, mode, *args, **kwargs)

        monkeypatch.setattr(writer, "open", full, raising=False)
        folder = tmp_path / "ev"
        assert _run(["--out", str(folder), "--scenario", SCENARIO]) == 3
        err = capsys.readouterr().err
        _one_line(err, f"run.py: cannot write {folder / 'run.json'}: No space left on device")
        assert _audit(str(folder))[0] == 1

    def test_a_file_another_hand_made_in_the_folder_is_one_line(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
    ) -> None:
        """A scenario that pre-creates SHA256SUMS used to end the run in a FileExistsError traceback."""
        _no_self_reexecution(monkeypatch)
        real = campaign.write_evidence

        def planted(folder: Path, *args: Any, **kwargs: Any) -> Any:
            (folder / "SHA256SUMS").write_text("mine\n")
            return real(folder, *args, **kwargs)

        monkeypatch.setattr(campaign, "write_evidence", planted)
        assert _run(["--out", str(tmp_path / "ev"), "--scenario", SCENARIO]) == 3
        _one_line(
            capsys.readouterr().err,
            f"run.py: cannot write {tmp_path / 'ev' / 'SHA256SUMS'}: it already "
            "exists, though this run did not write it",
        )


class TestHostileText:
    def test_no_control_character_reaches_the_terminal(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
    ) -> None:
        """Names and reasons from a tampered folder are escaped in the text report and in --json."""
        _no_self_reexecution(monkeypatch)
        folder = tmp_path / "ev"
        assert _run(["--out", str(folder), "--scenario", SCENARIO]) == 0
        hostile = "".join(CONTROL) + "]0;owned"
        result = folder / "scenarios" / SCENARIO / "result.json"
        record = json.loads(result.read_text())
        record["outcomes"] = {f"slow{hostile}": "STALE", "fast": "COMMITTED"}
        record["name"] = hostile
        result.write_text(json.dumps(record), encoding="utf-8")
        (folder / f"notes{hostile}").write_text("x")
        code, out = _audit(str(folder), "--no-rerun")
        capsys.readouterr()
        assert audit_command.main([str(folder), "--no-rerun", "--json"]) == 1
        printed = capsys.readouterr().out
        assert code == 1 and "\\x1b" in out
        for char in CONTROL:
            assert char not in out and char not in printed
        assert json.loads(printed)["ok"] is False


class TestActors:
    @pytest.mark.timeout(10)
    def test_sys_exit_in_an_actor_is_an_error_at_once(self, tmp_path: Path) -> None:
        """SystemExit is no Exception: it used to escape the actor and leave the run HUNG after the watchdog."""
        path = tmp_path / "exits.py"
        path.write_text(
            '"""An actor that calls sys.exit."""\n\nimport sys\n\nfrom lab import Scenario, actor, only\n\n\n'
            "class Exits(Scenario):\n"
            '    source = "tests/test_evidence_edges.py"\n'
            '    outcomes = only(quitter="DONE", other="DONE")\n\n'
            "    @actor\n    def quitter(self) -> object:\n        sys.exit(3)\n\n"
            "    @actor\n    def other(self) -> object:\n        return 'DONE'\n",
            encoding="utf-8",
        )
        loaded = load(path)
        assert isinstance(loaded, LoadedScenario), loaded
        begun = time.perf_counter()
        result = run_scenario(loaded, watchdog_seconds=5.0)
        assert time.perf_counter() - begun < 2.0
        assert result.run_status == "FINISHED" and str(result.verdict) == "FAIL"  # its expected outcome was DONE
        assert result.outcomes == {"quitter": "ERROR", "other": "DONE"}
        assert "SystemExit: 3" in result.errors["quitter"]


class TestRecordsOfTheWrongKind:
    WEIRD: tuple[object, ...] = ([], {}, None, "x", -1, 1.5, True, [{}], {"a": []}, 10**40, math.pi)

    def test_no_rule_raises_whatever_it_is_given(self) -> None:
        """Every field of every record kind, given every kind of JSON value, is a problem line, never a TypeError
        (``"verdict": []`` and ``"status": {}`` used to crash the auditor before any sum was checked)."""
        tables = [value for name, value in vars(schema).items() if name.endswith("_FIELDS")]
        assert len(tables) >= 15
        for table in tables:
            for weird in self.WEIRD:
                record = dict.fromkeys(table, weird)
                schema.field_problems(record, table)
                schema.field_problems({key: [record] for key in table}, table)


class TestGitAttributes:
    def test_evidence_is_byte_exact_on_every_checkout(self) -> None:
        """core.autocrlf must not rewrite archived bytes: their sums would no longer match."""
        done = subprocess.run(
            [
                "git",
                "-C",
                str(ROOT),
                "check-attr",
                "text",
                "--",
                "evidence/any/run.json",
                "evidence/any/sources/lab/x.py",
            ],
            capture_output=True,
            text=True,
            check=False,
        )
        if done.returncode != 0:
            pytest.skip("not a git checkout")
        assert done.stdout.splitlines() == [
            "evidence/any/run.json: text: unset",
            "evidence/any/sources/lab/x.py: text: unset",
        ]
