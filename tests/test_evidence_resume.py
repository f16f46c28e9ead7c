"""``run.py --resume --out DIR`` finishes an unfinished folder (issue 23, point 2): only the scenarios it lacks run,
and a folder begun by another command or from other sources is refused in one line, untouched."""

from __future__ import annotations

import io
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console

import lab.campaign.campaign as campaign
from lab.evidence.verify import audit
from tests.evidence_checkout import FROZEN, frozen_checkout, run

NAMES = ("out_of_order_commit", "abba_deadlock")
WORDS = [word for name in NAMES for word in ("--scenario", name)]
END = ("SHA256SUMS", "audit.json", "run.json", "report.md", "report.html")


@pytest.fixture
def unfinished(tmp_path: Path) -> Iterator[Path]:
    """A folder of the two scenarios as a run killed before its end leaves it: the end's files are not there yet,
    and the last scenario's result.json neither (its trace is: it was being written)."""
    out = tmp_path / "ev"
    with frozen_checkout():
        assert run.main(["--out", str(out), *WORDS], console=Console(file=io.StringIO())) == 0
        for name in END:
            (out / name).unlink()
        (out / "scenarios" / NAMES[1] / "result.json").unlink()
        yield out


def _listing(folder: Path) -> list[str]:
    return sorted(str(path.relative_to(folder)) for path in folder.rglob("*"))


def test_resume_runs_only_the_scenarios_the_folder_lacks(unfinished: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    ran: list[str] = []
    real = campaign.run_files

    def recorded(jobs: Any, **options: Any) -> Any:
        ran.extend(job.path.stem for job in jobs)
        return real(jobs, **options)

    monkeypatch.setattr(campaign, "run_files", recorded)
    kept = (unfinished / "scenarios" / NAMES[0] / "result.json").stat().st_ino
    assert run.main(["--out", str(unfinished), *WORDS, "--resume"], console=Console(file=io.StringIO())) == 0
    assert ran == [NAMES[1]]
    assert (unfinished / "scenarios" / NAMES[0] / "result.json").stat().st_ino == kept  # not written again
    report = audit(unfinished)
    assert report.ok, report.problems
    assert report.rerun.scenarios == 2  # the self-audit and this audit re-executed the kept one too


def test_resume_refuses_another_command(unfinished: Path, capsys: pytest.CaptureFixture[str]) -> None:
    before = _listing(unfinished)
    code = run.main(["--out", str(unfinished), "--scenario", NAMES[0], "--resume"])
    assert code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "was begun by another command" in err, err
    assert _listing(unfinished) == before


def test_resume_refuses_other_sources(
    unfinished: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    other = Path(shutil.copytree(FROZEN, tmp_path / "other"))
    lesson = other / "scenarios" / f"{NAMES[0]}.py"
    lesson.write_text(lesson.read_text(encoding="utf-8") + "\n# edited\n", encoding="utf-8")
    monkeypatch.setattr(run, "ROOT", other)
    monkeypatch.setattr(run, "SCENARIOS", other / "scenarios")
    before = _listing(unfinished)
    assert run.main(["--out", str(unfinished), *WORDS, "--resume"]) == 2
    err = capsys.readouterr().err
    assert f"the sources differ from those it was begun with (1 files: scenarios/{NAMES[0]}.py)" in err, err
    assert _listing(unfinished) == before


def test_resume_refuses_a_finished_folder(unfinished: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert run.main(["--out", str(unfinished), *WORDS, "--resume"], console=Console(file=io.StringIO())) == 0
    capsys.readouterr()
    assert run.main(["--out", str(unfinished), *WORDS, "--resume"]) == 2
    assert "is finished (it has SHA256SUMS); nothing to resume" in capsys.readouterr().err
