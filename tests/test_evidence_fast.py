"""Fast again (issue 23, point 6), without changing what runs: the re-execution child may be a fork of the auditor
(only when that is the very code a new interpreter would import), and the writer starts its self-audit's child
while it writes (used only if it is the very child the audit would start)."""

from __future__ import annotations

import importlib
import io
import json
import os
import shutil
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console

import lab.evidence.reexecute.child as child
from lab.evidence.reexecute.child import Code, Running, start_child
from lab.evidence.reexecute.forked import MTIME_MARGIN_NS, unchanged_since
from lab.evidence.reexecute.rerun import CHECKOUT, Expected, rerun
from lab.evidence.verify import audit
from tests.evidence_checkout import FROZEN, frozen_checkout, run

rerun_module = importlib.import_module("lab.evidence.reexecute.rerun")

SCENARIO = "out_of_order_commit"


def _aged_copy(tmp_path: Path) -> Path:
    """A copy of the frozen checkout whose every file and folder was last modified an hour ago."""
    copy = Path(shutil.copytree(FROZEN, tmp_path / "checkout"))
    past = time.time() - 3600
    for where, _, files in os.walk(copy):
        for name in files:
            os.utime(os.path.join(where, name), (past, past))
        os.utime(where, (past, past))
    return copy


def test_a_forked_child_reports_what_a_new_interpreter_reports(tmp_path: Path) -> None:
    """The same request, to a fork of a process that imported the checkout's lab and to a new interpreter: the
    same report, byte for byte (traces, records, where lab came from)."""
    copy = _aged_copy(tmp_path)
    script = textwrap.dedent(
        f"""
        import json, sys
        from pathlib import Path
        sys.path.insert(0, {str(copy)!r})
        from lab.evidence.reexecute import child
        code = child.Code(Path({str(copy)!r}), sandboxed=False, label="the auditing checkout")
        request = json.dumps({{"protocol": 1, "scenarios": [{{"name": {SCENARIO!r}, "watchdog_seconds": None}}]}})
        forkable = child.forkable(code)
        forked = child.run_child(code, request.encode(), 60.0, sys.executable)
        child.forkable = lambda code: False
        spawned = child.run_child(code, request.encode(), 60.0, sys.executable)
        print(json.dumps([forkable, forked.stdout.decode(), spawned.stdout.decode()]))
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", script], cwd=tmp_path, capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr
    forkable, forked, spawned = json.loads(done.stdout)
    assert forkable is True
    assert forked == spawned
    report = json.loads(forked)
    assert report["lab"] == str(copy / "lab" / "__init__.py")
    assert report["results"][SCENARIO]["run_status"] == "FINISHED"


def test_a_lab_file_changed_since_the_start_means_a_new_interpreter(tmp_path: Path) -> None:
    """A file of the checkout's lab/ modified after the auditor started may not be what it imported: then the
    child is a new interpreter. So is code the auditor did not import, and the archive's (sandboxed) code."""
    copy = _aged_copy(tmp_path)
    moment = time.time_ns() - MTIME_MARGIN_NS  # as forkable() asks: a coarse clock stamps files
    assert unchanged_since(copy / "lab", moment)
    (copy / "lab" / "engine" / "core" / "_trace.py").touch()
    assert not unchanged_since(copy / "lab", moment)
    assert not child.forkable(Code(copy, sandboxed=False, label=CHECKOUT))  # not the lab this process imported
    imported = Path(child.__file__).resolve().parents[3]
    assert not child.forkable(Code(imported, sandboxed=True, label=CHECKOUT))


def test_the_self_audit_uses_the_child_the_writer_started(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """One re-execution child for the self-audit, started before the folder was written: no second child."""
    starts: list[bytes] = []
    real_start = rerun_module.start_child

    def counted(code: Code, request: bytes, limit: float, python: str) -> Running | str:
        starts.append(request)
        return real_start(code, request, limit, python)

    def no_fresh_child(*args: Any) -> Any:
        raise AssertionError("the self-audit started a child of its own")

    monkeypatch.setattr(rerun_module, "start_child", counted)
    monkeypatch.setattr(rerun_module, "run_child", no_fresh_child)
    out = tmp_path / "ev"
    with frozen_checkout():
        assert run.main(["--out", str(out), "--scenario", SCENARIO], console=Console(file=io.StringIO())) == 0
        monkeypatch.undo()
        assert audit(out).ok
    assert len(starts) == 1 and json.loads(starts[0])["scenarios"][0]["name"] == SCENARIO
    recorded = json.loads((out / "audit.json").read_text(encoding="utf-8"))["rerun"]
    assert recorded["status"] == "MATCHED" and recorded["scenarios"] == 1


def _stand_in(tmp_path: Path, body: str) -> Code:
    package = tmp_path / "src" / "lab" / "evidence"
    package.mkdir(parents=True)
    for folder in (package, package.parent):
        (folder / "__init__.py").write_text("")
    (package / "rerun.py").write_text(f"import os, sys, json, time\n\ndef main():\n{body}\n    return 0\n")
    return Code(tmp_path / "src", sandboxed=False, label="stand-in")


def test_a_started_child_that_is_not_the_one_needed_is_ended(tmp_path: Path) -> None:
    """A child started for another request (or code) is never believed: it is ended, and the child the audit
    needs runs instead."""
    stale = _stand_in(tmp_path, "    print(os.getpid(), flush=True)\n    time.sleep(600)")
    started = start_child(stale, b"{}", 30.0, sys.executable)
    assert isinstance(started, Running)
    expected = Expected(SCENARIO, None, "0" * 64, None, {}, "PASS", "FINISHED")
    assert not started.matches(Code(FROZEN, sandboxed=False, label=CHECKOUT), b"{}", 30.0)
    summary, problems, _ = rerun(Code(FROZEN, sandboxed=False, label=CHECKOUT), [expected], started=started)
    assert not started.matches(stale, b"{}", 30.0)  # closed: its session killed, its folder removed
    assert summary.code == CHECKOUT and problems  # the real child ran (and found the made-up digest wrong)
    assert any("different trace" in problem.reason for problem in problems)
