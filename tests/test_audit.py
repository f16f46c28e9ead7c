"""audit.py: a fresh folder verifies; every tamper is named with its file; the audit itself writes nothing."""

from __future__ import annotations

import hashlib
import io
import json
import os
import shutil
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console

from tests.evidence_checkout import frozen_checkout
from tests.forging import reseal

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import audit as audit_command  # noqa: E402  (audit.py and run.py live at the repository root)
import run  # noqa: E402

SCENARIO = "out_of_order_commit"


@pytest.fixture(scope="module", autouse=True)
def _frozen() -> Iterator[Path]:
    """Write from, and audit against, one frozen copy of the checkout (see tests/evidence_checkout.py)."""
    with frozen_checkout() as path:
        yield path


TRACE = f"scenarios/{SCENARIO}/trace.jsonl"
RESULT = f"scenarios/{SCENARIO}/result.json"


@pytest.fixture(scope="module")
def pristine(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("evidence") / "ev"
    assert run.main(["--out", str(folder), "--scenario", SCENARIO], console=Console(file=io.StringIO())) == 0
    return folder


@pytest.fixture()
def ev(pristine: Path, tmp_path: Path) -> Path:
    """A private copy of the module's evidence folder, free to tamper with."""
    return Path(shutil.copytree(pristine, tmp_path / "ev", symlinks=True))


def _audit(*args: str) -> tuple[int, str]:
    out = io.StringIO()
    code = audit_command.main(list(args), console=Console(file=out, soft_wrap=True, width=200))
    return code, out.getvalue()


def _report(folder: Path, *args: str, capsys: pytest.CaptureFixture[str]) -> tuple[int, dict[str, Any]]:
    capsys.readouterr()
    code = audit_command.main([str(folder), "--json", *args])
    return code, json.loads(capsys.readouterr().out)


def _named(report: dict[str, Any], file: str, words: str) -> bool:
    return any(p["file"] == file and words in p["reason"] for p in report["problems"])


def _forge(folder: Path, rel: str, old: str, new: str) -> None:
    """A forger's edit of archived code, with every fingerprint recomputed to match: sources.json and SHA256SUMS."""
    path = folder / "sources" / rel
    text = path.read_text()
    assert old in text
    path.write_text(text.replace(old, new, 1))
    sources = json.loads((folder / "sources.json").read_text())
    for entry in sources["files"]:
        entry["sha256"] = hashlib.sha256((folder / "sources" / entry["path"]).read_bytes()).hexdigest()
    lines = "".join(f"{e['sha256']}  {e['path']}\n" for e in sources["files"])
    sources["combined_sha256"] = hashlib.sha256(lines.encode()).hexdigest()
    (folder / "sources.json").write_text(json.dumps(sources, sort_keys=True, indent=2) + "\n")
    reseal(folder)


def _line_with(path: Path, text: str) -> int:
    """The number of the first line of ``path`` that contains ``text``."""
    return next(n for n, line in enumerate(path.read_text().splitlines(), start=1) if text in line)


def _snapshot(folder: Path) -> dict[str, tuple[int, int, int]]:
    found = {}
    for dirpath, dirnames, filenames in os.walk(folder):
        for name in dirnames + filenames:
            info = os.lstat(os.path.join(dirpath, name))
            found[os.path.relpath(os.path.join(dirpath, name), folder)] = (info.st_mtime_ns, info.st_size, info.st_mode)
    return found


@pytest.mark.timeout(60)
class TestCleanFolder:
    @pytest.mark.slow
    def test_a_fresh_folder_verifies_with_reexecution(self, pristine: Path) -> None:
        """Exit 0; the scenarios ran again, with this checkout's code (the archive's is identical), to identical
        traces: a plain OK."""
        code, out = _audit(str(pristine))
        assert code == 0, out
        assert "re-execution  MATCHED: 1 scenarios re-executed with the auditing checkout's code" in out
        assert out.splitlines()[-1] == "result: OK: everything verified; the run's own status is PASS"

    @pytest.mark.slow
    def test_a_relative_folder_path_verifies_too(self, pristine: Path, monkeypatch: pytest.MonkeyPatch) -> None:
        """A folder named relative to the current directory (evidence/NAME) re-executes from the right place."""
        monkeypatch.chdir(pristine.parent)
        code, out = _audit(pristine.name)
        assert code == 0, out
        assert "re-execution  MATCHED" in out

    def test_no_rerun_says_it_skipped(self, pristine: Path) -> None:
        """--no-rerun still verifies the rest, and says what it did not do; the OK line says the run's status."""
        code, out = _audit(str(pristine), "--no-rerun")
        assert code == 0
        assert "SKIPPED: re-execution skipped (--no-rerun)" in out
        assert out.splitlines()[-1] == (
            "result: OK: verified without re-execution (--no-rerun); the run's own status is PASS"
        )

    @pytest.mark.slow
    def test_json_output_parses(self, pristine: Path, capsys: pytest.CaptureFixture[str]) -> None:
        """--json prints the report as one JSON document."""
        code, report = _report(pristine, capsys=capsys)
        assert code == 0
        assert report["ok"] is True and report["problems"] == [] and report["rerun"]["status"] == "MATCHED"
        assert report["mode"] == "audit" and report["scenarios"] == 1

    @pytest.mark.slow
    def test_the_audit_writes_nothing_into_the_folder(self, ev: Path) -> None:
        """Every entry keeps its mtime, size and mode; no __pycache__ appears, even after re-execution."""
        before = _snapshot(ev)
        assert _audit(str(ev))[0] == 0
        assert _snapshot(ev) == before
        assert not any("__pycache__" in name for name in _snapshot(ev))

    @pytest.mark.slow
    def test_drift_outside_the_machinery_informs_without_reexecution(self, pristine: Path, tmp_path: Path) -> None:
        """A checkout whose sessions or scenarios changed since the run is named file by file; --no-rerun passes."""
        checkout = Path(shutil.copytree(pristine / "sources", tmp_path / "checkout"))
        (checkout / "lab" / "errors.py").write_text("# changed\n", encoding="utf-8")
        (checkout / "lab" / "new_module.py").write_text("# added\n", encoding="utf-8")
        code, out = _audit(str(pristine), "--no-rerun", "--checkout", str(checkout))
        assert code == 0
        assert "lab/errors.py (changed)" in out and "lab/new_module.py (added)" in out

    @pytest.mark.slow
    def test_drift_stops_reexecution_by_default(self, pristine: Path, tmp_path: Path) -> None:
        """Neither the checkout's code (it is not what ran) nor the archive's (not trusted) is run; that is no OK."""
        checkout = Path(shutil.copytree(pristine / "sources", tmp_path / "checkout"))
        (checkout / "lab" / "errors.py").write_text("# changed\n", encoding="utf-8")
        code, out = _audit(str(pristine), "--checkout", str(checkout))
        assert code == 1
        assert "re-execution  SKIPPED: re-execution skipped: 1 archived files that would run differ" in out
        assert (
            "PROBLEM sources/: re-execution skipped: 1 archived files that would run differ from the auditing "
            f"checkout {checkout} (lab/errors.py (changed)), so neither its code nor the archive's was run; run "
            "the archived code, contained, with --execute-archive" in out
        )

    @pytest.mark.slow
    def test_drift_of_the_machinery_fails_unless_accepted(
        self, pristine: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
    ) -> None:
        """The engine, runner or evidence code differing from the judge is a problem; --accept-drift records it."""
        checkout = Path(shutil.copytree(pristine / "sources", tmp_path / "checkout"))
        (checkout / "lab" / "engine" / "core" / "_scheduler.py").write_text("# changed\n", encoding="utf-8")
        code, report = _report(pristine, "--no-rerun", "--checkout", str(checkout), capsys=capsys)
        assert code == 1
        assert _named(report, "sources/", "the lab's machinery differs from the auditing checkout")
        assert _named(report, "sources/", "(lab/engine/core/_scheduler.py (changed))")
        code, report = _report(pristine, "--no-rerun", "--accept-drift", "--checkout", str(checkout), capsys=capsys)
        assert code == 0 and report["accepted_drift"] == ["lab/engine/core/_scheduler.py"]
        code, out = _audit(str(pristine), "--no-rerun", "--accept-drift", "--checkout", str(checkout))
        assert out.splitlines()[-1] == (
            "result: OK: verified without re-execution (--no-rerun), with 1 files of the "
            "lab's machinery differing (--accept-drift); the run's own status is PASS"
        )

    def test_a_crlf_checkout_shows_no_drift(self, pristine: Path, tmp_path: Path) -> None:
        """Line endings alone are not drift."""
        checkout = Path(shutil.copytree(pristine / "sources", tmp_path / "checkout"))
        for path in checkout.rglob("*.py"):
            path.write_bytes(path.read_bytes().replace(b"\n", b"\r\n"))
        code, out = _audit(str(pristine), "--no-rerun", "--checkout", str(checkout))
        assert code == 0
        assert "drift         none" in out


@pytest.mark.timeout(30)
class TestNotAnEvidenceFolder:
    @pytest.mark.parametrize("kind", ["missing", "file", "empty", "unrelated"])
    def test_exit_2_with_one_line(self, tmp_path: Path, kind: str, capsys: pytest.CaptureFixture[str]) -> None:
        """Missing, a file, empty, or neither run.json nor SHA256SUMS: exit 2, one line, no traceback."""
        target = tmp_path / "target"
        if kind == "file":
            target.write_text("{}")
        elif kind in {"empty", "unrelated"}:
            target.mkdir()
            if kind == "unrelated":
                (target / "notes.txt").write_text("hello")
        assert _audit(str(target))[0] == 2
        err = capsys.readouterr().err
        assert len(err.strip().splitlines()) == 1 and "Traceback" not in err
        assert err.startswith("audit.py: ")

    def test_bad_arguments_exit_2(self, capsys: pytest.CaptureFixture[str]) -> None:
        """No folder named: a usage error in one line."""
        assert _audit()[0] == 2
        assert len(capsys.readouterr().err.strip().splitlines()) == 1

    def test_json_reports_the_error_too(self, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
        """--json still prints JSON when there is nothing to audit."""
        assert audit_command.main([str(tmp_path / "nope"), "--json"]) == 2
        assert json.loads(capsys.readouterr().out)["ok"] is False


@pytest.mark.timeout(30)
class TestIntegrity:
    def test_an_edited_byte_is_caught(self, ev: Path, capsys: pytest.CaptureFixture[str]) -> None:
        """The trace no longer matches SHA256SUMS, nor result.json's trace_sha256."""
        path = ev / TRACE
        path.write_bytes(path.read_bytes().replace(b"STALE", b"STALF"))
        code, report = _report(ev, "--no-rerun", capsys=capsys)
        assert code == 1
        assert _named(report, TRACE, "does not match SHA256SUMS")
        assert _named(report, TRACE, "does not match the trace_sha256 in result.json")

    def test_a_missing_file_and_an_extra_file_are_named(self, ev: Path, capsys: pytest.CaptureFixture[str]) -> None:
        """Both problems are listed, each with its file."""
        (ev / "report.md").unlink()
        (ev / "notes.txt").write_text("added later")
        code, report = _report(ev, "--no-rerun", capsys=capsys)
        assert code == 1
        assert _named(report, "report.md", "listed in SHA256SUMS, but missing")
        assert _named(report, "notes.txt", "not listed in SHA256SUMS")

    def test_a_path_leaving_the_folder_is_never_opened(
        self, ev: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """A SHA256SUMS line naming ../../etc/passwd is reported; nothing outside the folder is opened."""
        with open(ev / "SHA256SUMS", "a", encoding="utf-8") as sums:
            sums.write(f"{'0' * 64}  ../../etc/passwd\n{'0' * 64}  /etc/passwd\n")
        opened: list[str] = []
        real_open = os.open

        def spy(path: Any, flags: int, *args: Any, **kwargs: Any) -> int:
            opened.append(os.fsdecode(path))
            return real_open(path, flags, *args, **kwargs)

        monkeypatch.setattr(os, "open", spy)
        code, report = _report(ev, "--no-rerun", capsys=capsys)
        monkeypatch.undo()
        assert code == 1
        assert _named(report, "SHA256SUMS", "names '../../etc/passwd': a path that leaves the folder")
        assert _named(report, "SHA256SUMS", "names '/etc/passwd': an absolute path")
        assert opened and not any("etc" in path or ".." in path for path in opened)

    def test_a_symlink_in_place_of_a_trace_is_not_followed(
        self, ev: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
    ) -> None:
        """Even a link to an identical copy is a problem: the folder must hold the bytes itself."""
        outside = tmp_path / "copy.jsonl"
        shutil.copyfile(ev / TRACE, outside)
        (ev / TRACE).unlink()
        (ev / TRACE).symlink_to(outside)
        code, report = _report(ev, "--no-rerun", capsys=capsys)
        assert code == 1
        assert _named(report, TRACE, "is a symbolic link; not followed")

    def test_a_symlinked_folder_is_not_entered(
        self, ev: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
    ) -> None:
        """A folder replaced by a link to its copy elsewhere: every file under it is refused."""
        moved = Path(shutil.move(str(ev / "scenarios"), tmp_path / "elsewhere"))
        (ev / "scenarios").symlink_to(moved)
        code, report = _report(ev, "--no-rerun", capsys=capsys)
        assert code == 1
        assert _named(report, TRACE, "passes through the symbolic link scenarios")
        assert _named(report, "scenarios", "is a symbolic link")

    def test_a_fifo_is_refused_without_hanging(self, ev: Path, capsys: pytest.CaptureFixture[str]) -> None:
        """A FIFO in place of report.md is named, never opened for reading."""
        if not hasattr(os, "mkfifo"):
            pytest.skip("no FIFOs on this platform")
        (ev / "report.md").unlink()
        os.mkfifo(ev / "report.md")
        code, report = _report(ev, "--no-rerun", capsys=capsys)
        assert code == 1
        assert _named(report, "report.md", "not a regular file")

    def test_a_missing_sha256sums_is_an_incomplete_run(self, ev: Path, capsys: pytest.CaptureFixture[str]) -> None:
        """The manifest is written last; without it the audit says the run did not finish."""
        (ev / "SHA256SUMS").unlink()
        code, report = _report(ev, "--no-rerun", capsys=capsys)
        assert code == 1
        assert _named(report, "SHA256SUMS", "the run did not finish writing this folder")


@pytest.mark.timeout(30)
class TestBadRecords:
    def test_malformed_json(self, ev: Path, capsys: pytest.CaptureFixture[str]) -> None:
        """Garbage in run.json: named, one line."""
        (ev / "run.json").write_text('{"format": oops}')
        code, report = _report(ev, "--no-rerun", capsys=capsys)
        assert code == 1
        assert _named(report, "run.json", "is not valid JSON")

    def test_truncated_json(self, ev: Path, capsys: pytest.CaptureFixture[str]) -> None:
        """Half a result.json: named as truncated."""
        data = (ev / RESULT).read_bytes()
        (ev / RESULT).write_bytes(data[: len(data) // 2])
        code, report = _report(ev, "--no-rerun", capsys=capsys)
        assert code == 1
        assert _named(report, RESULT, "is truncated")

    def test_non_utf8_bytes(self, ev: Path, capsys: pytest.CaptureFixture[str]) -> None:
        """A byte that is not UTF-8 is located."""
        (ev / "sources.json").write_bytes(b'{"files": "\xff"}')
        (ev / TRACE).write_bytes(b"\xfe\n")
        code, report = _report(ev, "--no-rerun", capsys=capsys)
        assert code == 1
        assert _named(report, "sources.json", "is not UTF-8 (byte 0xff at offset 11)")
        assert _named(report, TRACE, "is not UTF-8")

    def test_a_huge_file_is_not_read_whole(self, ev: Path, capsys: pytest.CaptureFixture[str]) -> None:
        """A run.json over 16 MiB is refused, not parsed."""
        with open(ev / "run.json", "ab") as handle:
            handle.write(b" " * (17 << 20))
        code, report = _report(ev, "--no-rerun", capsys=capsys)
        assert code == 1
        assert _named(report, "run.json", "larger than 16 MiB")

    @pytest.mark.parametrize(
        ("rel", "field", "value"),
        [(RESULT, "verdict", []), ("run.json", "status", {}), ("run.json", "checks", {"passed": []})],
    )
    def test_a_field_of_the_wrong_kind_is_one_problem(
        self, ev: Path, rel: str, field: str, value: object, capsys: pytest.CaptureFixture[str]
    ) -> None:
        """``"verdict": []`` and ``"status": {}`` used to crash the auditor with a TypeError."""
        record = json.loads((ev / rel).read_text())
        record[field] = value
        (ev / rel).write_text(json.dumps(record, sort_keys=True, indent=2) + "\n")
        reseal(ev)
        code, report = _report(ev, "--no-rerun", capsys=capsys)
        assert code == 1
        assert [p["file"] for p in report["problems"]] == [rel]
        assert report["problems"][0]["reason"].startswith(f"field {field!r} is {value!r}, not ")

    def test_a_file_over_the_size_limit_is_not_hashed(self, ev: Path, capsys: pytest.CaptureFixture[str]) -> None:
        """Any file over 64 MiB is refused from its size alone (a sparse file: nothing of it is read)."""
        with open(ev / "report.md", "r+b") as handle:
            handle.truncate((64 << 20) + 1)
        code, report = _report(ev, "--no-rerun", capsys=capsys)
        assert code == 1
        assert _named(report, "report.md", "listed in SHA256SUMS, but larger than 64 MiB; not hashed")

    def test_every_problem_is_listed_one_line_each(self, ev: Path) -> None:
        """Several tampers at once: each shows as its own PROBLEM line, with its file."""
        (ev / "run.json").write_text("[")
        (ev / "report.md").unlink()
        (ev / "extra").write_text("x")
        code, out = _audit(str(ev), "--no-rerun")
        problems = [line for line in out.splitlines() if line.startswith("  PROBLEM ")]
        assert code == 1
        assert any(line.startswith("  PROBLEM run.json: ") for line in problems)
        assert any(line.startswith("  PROBLEM report.md: ") for line in problems)
        assert any(line.startswith("  PROBLEM extra: ") for line in problems)
        assert f"result: {len(problems)} problems" in out


@pytest.mark.timeout(60)
class TestCoveredTracks:
    @pytest.mark.slow
    def test_an_edited_outcome_with_rewritten_sums(self, ev: Path, capsys: pytest.CaptureFixture[str]) -> None:
        """The cross-checks and the re-execution still catch it."""
        path = ev / TRACE
        line = _line_with(path, '"outcome":"STALE"')
        path.write_bytes(path.read_bytes().replace(b'"outcome":"STALE"', b'"outcome":"COMMITTED"'))
        reseal(ev)
        code, report = _report(ev, capsys=capsys)
        assert code == 1
        assert _named(report, RESULT, "slow's outcome is STALE, but the trace says COMMITTED")
        assert _named(report, TRACE, "does not match the trace_sha256 in result.json")
        assert _named(report, TRACE, f"re-execution gave a different trace: first difference at line {line}")
        assert report["rerun"]["status"] == "DIFFERED"

    def test_an_edited_total_with_rewritten_sums(self, ev: Path, capsys: pytest.CaptureFixture[str]) -> None:
        """run.json's totals must equal the sum of the results."""
        record = json.loads((ev / "run.json").read_text())
        passed = record["checks"]["passed"]
        record["checks"]["passed"] += 1
        (ev / "run.json").write_text(json.dumps(record, sort_keys=True, indent=2) + "\n")
        reseal(ev)
        code, report = _report(ev, "--no-rerun", capsys=capsys)
        assert code == 1
        assert _named(
            report, "run.json", f"checks say {passed + 1} passed and 0 failed, but the results add up to {passed} and 0"
        )

    def test_edited_sources_are_not_executed(self, ev: Path, capsys: pytest.CaptureFixture[str]) -> None:
        """A source that fails its fingerprint is reported, and the archive is not run."""
        path = ev / "sources" / "scenarios" / f"{SCENARIO}.py"
        path.write_text(path.read_text() + "\nraise SystemExit('tampered')\n")
        reseal(ev)
        code, report = _report(ev, capsys=capsys)
        assert code == 1
        assert _named(report, f"sources/scenarios/{SCENARIO}.py", "does not match its fingerprint in sources.json")
        assert report["rerun"]["status"] == "SKIPPED" and "not run" in report["rerun"]["note"]

    @pytest.mark.slow
    def test_a_fully_consistent_forgery_is_caught_by_default(
        self, ev: Path, capsys: pytest.CaptureFixture[str]
    ) -> None:
        """Change the archived code and every fingerprint to match: by default the forged code is not run, and
        that it differs from the checkout is the problem."""
        _forge(ev, f"scenarios/{SCENARIO}.py", "begin -> ticket v", "begin => ticket v")
        code, report = _report(ev, capsys=capsys)
        assert code == 1 and report["rerun"]["status"] == "SKIPPED"
        assert [p["file"] for p in report["problems"]] == ["sources/"]
        assert (
            f"(scenarios/{SCENARIO}.py (changed)), so neither its code nor the archive's was run"
            in (report["problems"][0]["reason"])
        )

    @pytest.mark.slow
    def test_a_fully_consistent_forgery_fails_its_reexecution(
        self, ev: Path, capsys: pytest.CaptureFixture[str]
    ) -> None:
        """Asked to run the archived code, the audit shows the difference the forged code makes."""
        line = _line_with(ev / TRACE, "begin -> ticket v")
        _forge(ev, f"scenarios/{SCENARIO}.py", "begin -> ticket v", "begin => ticket v")
        code, report = _report(ev, "--execute-archive", capsys=capsys)
        assert code == 1 and report["rerun"]["code"] == "the archived sources"
        assert [p["file"] for p in report["problems"]] == [TRACE]
        assert f"first difference at line {line}" in report["problems"][0]["reason"]

    @pytest.mark.slow
    def test_forged_machinery_that_echoes_its_records_is_caught_by_default(
        self, ev: Path, capsys: pytest.CaptureFixture[str]
    ) -> None:
        """An archived rerun.py that only repeats what the records say used to pass with "OK": its drift fails."""
        _forge(ev, "lab/evidence/reexecute/rerun.py", "def main() -> int:", "def main() -> int:  # echoes the records")
        code, report = _report(ev, capsys=capsys)
        assert code == 1
        assert _named(report, "sources/", "the lab's machinery differs from the auditing checkout")
        assert _named(report, "sources/", "(lab/evidence/reexecute/rerun.py (changed))")

    def test_reexecution_is_bounded_by_a_timeout(self, ev: Path, capsys: pytest.CaptureFixture[str]) -> None:
        """A child that does not finish in time is stopped and reported."""
        code, report = _report(ev, "--timeout", "0.001", capsys=capsys)
        assert code == 1
        assert report["rerun"]["status"] == "FAILED"
        assert _named(report, "sources/", "did not finish within 0.001 s")
