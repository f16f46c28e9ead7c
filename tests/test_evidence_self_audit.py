"""Every field of ``audit.json`` is derived again: a forged run status, note or count in the self-audit's record,
its sums recomputed, is named (before, only ``ok`` was read)."""

from __future__ import annotations

import io
import json
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console

from lab.evidence import audit
from tests.evidence_checkout import frozen_checkout, run
from tests.forging import reseal, rewrite


@pytest.fixture(scope="module", autouse=True)
def _frozen() -> Iterator[Path]:
    with frozen_checkout() as path:
        yield path


@pytest.fixture(scope="module")
def pristine(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("self-audit") / "ev"
    words = ["--out", str(folder), "--scenario", "out_of_order_commit", "--scenario", "abba_deadlock"]
    assert run.main(words, console=Console(file=io.StringIO())) == 0
    return folder


def _forged(pristine: Path, tmp_path: Path, change: Callable[[dict[str, Any]], None]) -> Path:
    folder = Path(shutil.copytree(pristine, tmp_path / "ev"))
    record = json.loads((folder / "audit.json").read_text(encoding="utf-8"))
    change(record)
    rewrite(folder, "audit.json", record)
    reseal(folder)
    return folder


@pytest.mark.slow
@pytest.mark.timeout(60)
class TestEveryFieldIsDerived:
    def test_the_honest_record_passes(self, pristine: Path) -> None:
        assert audit(pristine, rerun=False).problems == ()

    @pytest.mark.parametrize(
        ("field", "change"),
        [
            ("run_status", lambda r: r.update(run_status="FAIL")),
            ("scenarios", lambda r: r.update(scenarios=3)),
            ("explorations", lambda r: r.update(explorations=1)),
            ("files_verified", lambda r: r.update(files_verified=r["files_verified"] - 1)),
            ("mode", lambda r: r.update(mode="audit")),
            ("folder", lambda r: r.update(folder="elsewhere")),
            ("accepted_drift", lambda r: r.update(accepted_drift=["lab/engine/core/_scheduler.py"])),
            ("drift", lambda r: r["drift"].update(changed=["lab/x.py"])),
            ("signature", lambda r: r.update(signature="signed by nobody")),
            ("rerun.note", lambda r: r["rerun"].update(note="everything was fine, trust me")),
            ("rerun.status", lambda r: r["rerun"].update(status="SKIPPED")),
            ("rerun.scenarios", lambda r: r["rerun"].update(scenarios=1)),
            ("rerun.code", lambda r: r["rerun"].update(code="the archived sources")),
            ("rerun.seconds", lambda r: r["rerun"].update(seconds=-1)),
        ],
    )
    def test_a_forged_field_is_named(
        self, pristine: Path, tmp_path: Path, field: str, change: Callable[[dict[str, Any]], None]
    ) -> None:
        report = audit(_forged(pristine, tmp_path, change), rerun=False)
        reasons = [p.reason for p in report.problems if p.file == "audit.json"]
        assert any(reason.startswith(f"{field} is ") for reason in reasons), report.problems
