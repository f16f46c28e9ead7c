"""The folder itself and the command line around it: forgeries and misuses an audit used to call OK, or crash on.

Each folder test makes a folder with ``run.py`` and changes it the way an adversary did (a hard link, a signature
that is a symbolic link, an empty folder, a report edited under accepted drift of ``audit.py``) and shows the audit
names it; the command line tests show an empty path, a full disk and a reader that goes away each end plainly.
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
from tests.forging import reseal, rewrite

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import audit as audit_command  # noqa: E402  (audit.py and run.py live at the repository root)
import run  # noqa: E402


@pytest.fixture(scope="module", autouse=True)
def _frozen() -> Iterator[Path]:
    with frozen_checkout() as path:
        yield path


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


def _write(small: Path, folder: Path, *words: str) -> Path:
    """``run.py WORDS --out folder`` from ``small``, its self-audit without re-execution (the tests re-execute
    what they need)."""
    import lab.evidence.write.writer as writer

    real = writer.audit
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(run, "ROOT", small)
        patch.setattr(run, "SCENARIOS", small / "scenarios")
        patch.setattr(writer, "audit", lambda path, **options: real(path, **{**options, "rerun": False}))
        run.main([*words, "--out", str(folder)], console=Console(file=io.StringIO()))
    assert (folder / "SHA256SUMS").exists()
    return folder


@pytest.fixture()
def one(small: Path, tmp_path: Path) -> Path:
    """``run.py --scenario passes``: a folder that audits OK against ``small``."""
    return _write(small, tmp_path / "ev", "--scenario", "passes")


@pytest.mark.timeout(60)
class TestTheFolderItself:
    @pytest.mark.slow
    def test_the_genuine_folder_audits_ok(self, one: Path, small: Path) -> None:
        report = audit(one, checkout=small)
        assert report.ok, report.problems

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

    def test_a_signature_that_is_a_hard_link_is_a_problem(self, one: Path, small: Path, tmp_path: Path) -> None:
        secret = tmp_path / "secret.txt"
        secret.write_text("sk-do-not-print-1234\n")
        os.link(secret, one / "SHA256SUMS.sig")
        report = audit(one, checkout=small, rerun=False)
        assert [p.file for p in report.problems] == ["SHA256SUMS.sig"]
        assert "hard links" in report.problems[0].reason and "sk-do-not" not in json.dumps(report.to_json())

    def test_an_empty_folder_is_a_problem(self, one: Path, small: Path) -> None:
        (one / "explore" / "nothing").mkdir(parents=True)
        report = audit(one, checkout=small, rerun=False)
        assert [str(p) for p in report.problems] == [
            "explore/nothing/: is an empty folder: an evidence folder holds none"
        ]


def _refingerprint(folder: Path) -> None:
    """``sources.json`` made to match ``sources/`` as it now is, as a forger would."""
    sources: dict[str, Any] = json.loads((folder / "sources.json").read_text(encoding="utf-8"))
    for entry in sources["files"]:
        entry["sha256"] = hashlib.sha256((folder / "sources" / entry["path"]).read_bytes()).hexdigest()
    lines = "".join(f"{entry['sha256']}  {entry['path']}\n" for entry in sources["files"])
    sources["combined_sha256"] = hashlib.sha256(lines.encode()).hexdigest()
    rewrite(folder, "sources.json", sources)


@pytest.mark.timeout(60)
class TestAcceptedDriftStillChecksTheReports:
    @pytest.mark.slow
    def test_an_edited_report_is_caught_with_drift_in_audit_py(self, small: Path, tmp_path: Path) -> None:
        """f7: a comment added to the archived audit.py (re-fingerprinted) used to switch the report check off."""
        folder = _write(small, tmp_path / "ev")
        script = folder / "sources" / "audit.py"
        script.write_text(script.read_text() + "# reformatted\n")
        _refingerprint(folder)
        for name in ("report.md", "report.html"):
            (folder / name).write_text((folder / name).read_text().replace("FAIL", "PASS"))
        reseal(folder)
        report = audit(folder, checkout=small, accept_drift=True)
        assert report.accepted_drift == ("audit.py",)
        assert sorted(p.file for p in report.problems) == ["report.html", "report.md"]

    @pytest.mark.slow
    def test_drift_of_a_file_the_renderer_imports_still_switches_it_off(self, small: Path, tmp_path: Path) -> None:
        """Another renderer may have made other bytes from the same records: then the reports are not compared."""
        folder = _write(small, tmp_path / "ev")
        renderer = folder / "sources" / "lab" / "evidence" / "report" / "documents.py"
        renderer.write_text(renderer.read_text() + "# reformatted\n")
        _refingerprint(folder)
        (folder / "report.md").write_text((folder / "report.md").read_text() + "\n")
        reseal(folder)
        report = audit(folder, checkout=small, accept_drift=True, rerun=False)
        assert report.accepted_drift == ("lab/evidence/report/documents.py",)
        assert report.ok, report.problems


@pytest.mark.timeout(60)
class TestTheCommandLine:
    @pytest.mark.parametrize("words", [[""], [".", "--checkout", ""], [".", "--checkout="]])
    def test_an_empty_path_is_refused(self, words: list[str], capsys: pytest.CaptureFixture[str]) -> None:
        """``Path("")`` is the current folder: ``audit.py ""`` audited whatever folder it ran in."""
        assert audit_command.main(words) == 2
        err = capsys.readouterr().err
        assert "an empty path names no file or folder" in err and "Traceback" not in err

    def test_an_empty_out_is_refused(self, capsys: pytest.CaptureFixture[str]) -> None:
        assert run.main(["--out", ""], console=Console(file=io.StringIO())) == 2
        assert "an empty path names no file or folder" in capsys.readouterr().err

    @pytest.mark.slow
    def test_a_full_disk_is_one_line_and_no_traceback(self, one: Path, small: Path) -> None:
        with open("/dev/full", "w") as full:
            done = subprocess.run(
                [sys.executable, str(small / "audit.py"), str(one), "--no-rerun", "--checkout", str(small)],
                stdout=full, stderr=subprocess.PIPE, text=True, timeout=60,
                env={**os.environ, "PYTHONPATH": str(small)},
            )  # fmt: skip
        assert done.returncode == 1
        assert done.stderr.strip().splitlines() == [
            "audit.py: cannot write its output: No space left on device; the result was not shown"
        ]

    @pytest.mark.slow
    def test_a_reader_that_goes_away_is_exit_141(self, one: Path, small: Path) -> None:
        """rich answers a broken pipe with SystemExit(1), which said "problems found" of a passing audit."""
        child = subprocess.Popen(
            [sys.executable, str(small / "audit.py"), str(one), "--no-rerun", "--checkout", str(small)],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env={**os.environ, "PYTHONPATH": str(small)},
        )  # fmt: skip
        assert child.stdout is not None and child.stderr is not None
        child.stdout.close()  # the reader goes away before a line is read
        assert child.wait(timeout=60) == 141, child.stderr.read()
        child.stderr.close()
