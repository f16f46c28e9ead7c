"""An exploration that FAILs never ends with "all checks passed": exploring a mutant with --variant ends with the
exploration's own verdict in the last line and in both reports' titles."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from rich.console import Console

from lab.cli import main


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_a_mutant_explored_names_its_own_verdict(tmp_path: Path) -> None:
    out = io.StringIO()
    words = ["explore", "--scenario", "race_two_requests", "--variant", "CheckOutsideLockSession"]
    main([*words, "--out", str(tmp_path / "ev")], console_out=Console(file=out, width=80))
    last = " ".join(out.getvalue().split("evidence written to", 1)[1].split())
    assert "all checks passed" not in last
    assert "exploration race_two_requests (probe, CheckOutsideLockSession) FAIL" in last
    assert (tmp_path / "ev" / "report.md").read_text().splitlines()[0].endswith("; exploration FAIL")
    assert "<h1>Evidence: 1 scenario, PASS; exploration FAIL</h1>" in (tmp_path / "ev" / "report.html").read_text()
