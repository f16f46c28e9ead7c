"""Whose code an audit runs, and what that code may do: the trust model of docs/evidence.md, row by row.

The auditing checkout's code decides. An archive's own code runs only with ``--execute-archive``, and then in a
child (:mod:`lab.evidence.reexecute.child`) with a scrubbed environment, a temporary copy, limits on time, memory, file
size and output. The child only reports; the auditor compares. The child-process tests use tiny stand-in packages,
not the lab, so each costs one interpreter start.
"""

from __future__ import annotations

import hashlib
import io
import json
import shutil
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console

from lab.evidence import audit
from lab.evidence.reexecute import child
from lab.evidence.reexecute.child import Code, Finished, run_child
from lab.evidence.reexecute.rerun import Expected, _compare
from tests.evidence_checkout import FROZEN, frozen_checkout
from tests.forging import reseal

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import audit as audit_command  # noqa: E402  (audit.py and run.py live at the repository root)
import run  # noqa: E402

SCENARIO = "out_of_order_commit"
SECRET = "sk-do-not-leak-1234"
HOSTILE = """
import os as _os
import pathlib as _pathlib
for _place in (_pathlib.Path.home(), _pathlib.Path.cwd(), _pathlib.Path(__file__).parent):
    (_place / "pwned").write_text("x")
raise RuntimeError(
    f"ran: secret={_os.environ.get('AGNES_API_KEY')} home={_pathlib.Path.home()} cwd={_pathlib.Path.cwd()} "
    f"file={__file__}"
)
"""
"""Archived scenario code as a hostile archive would write it: it writes beside itself, in the working folder and in
the home folder, and reports what it saw (the loader turns its exception into the child's answer)."""


@pytest.fixture(scope="module", autouse=True)
def _frozen() -> Iterator[Path]:
    """Write from, and audit against, one frozen copy of the checkout (see tests/evidence_checkout.py)."""
    with frozen_checkout() as path:
        yield path


@pytest.fixture(scope="module")
def written(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A one-scenario folder (its self-audit without re-execution: the tests here re-execute what they need)."""
    import lab.evidence.write.writer as writer

    folder = tmp_path_factory.mktemp("trust") / "ev"
    real = writer.audit
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(writer, "audit", lambda path, **options: real(path, **{**options, "rerun": False}))
        assert run.main(["--out", str(folder), "--scenario", SCENARIO], console=Console(file=io.StringIO())) == 0
    return folder


@pytest.fixture()
def ev(written: Path, tmp_path: Path) -> Path:
    return Path(shutil.copytree(written, tmp_path / "ev"))


def _forge(folder: Path, rel: str, text: str) -> None:
    """Append ``text`` to archived code and recompute every fingerprint: sources.json and SHA256SUMS."""
    path = folder / "sources" / rel
    path.write_text(path.read_text() + text)
    sources = json.loads((folder / "sources.json").read_text())
    for entry in sources["files"]:
        entry["sha256"] = hashlib.sha256((folder / "sources" / entry["path"]).read_bytes()).hexdigest()
    lines = "".join(f"{e['sha256']}  {e['path']}\n" for e in sources["files"])
    sources["combined_sha256"] = hashlib.sha256(lines.encode()).hexdigest()
    (folder / "sources.json").write_text(json.dumps(sources, sort_keys=True, indent=2) + "\n")
    reseal(folder)


def _snapshot(folder: Path) -> dict[str, tuple[int, int]]:
    return {str(p.relative_to(folder)): (p.stat().st_mtime_ns, p.stat().st_size) for p in folder.rglob("*")}


def _report(*args: str, capsys: pytest.CaptureFixture[str]) -> tuple[int, dict[str, Any]]:
    capsys.readouterr()
    code = audit_command.main([*args, "--json"])
    return code, json.loads(capsys.readouterr().out)


class TestHostileArchive:
    @pytest.fixture()
    def hostile(self, ev: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
        """A consistent forgery that runs code on import, a secret in the auditor's environment, a home and a
        working folder of the auditor's own to watch."""
        _forge(ev, f"scenarios/{SCENARIO}.py", HOSTILE)
        for name in ("home", "cwd"):
            (tmp_path / name).mkdir()
        monkeypatch.setenv("AGNES_API_KEY", SECRET)
        monkeypatch.setenv("HOME", str(tmp_path / "home"))
        monkeypatch.chdir(tmp_path / "cwd")
        return ev

    def _untouched(self, hostile: Path, before: dict[str, tuple[int, int]], tmp_path: Path) -> None:
        assert _snapshot(hostile) == before
        assert not (tmp_path / "home" / "pwned").exists() and not (tmp_path / "cwd" / "pwned").exists()

    @pytest.mark.slow
    @pytest.mark.timeout(30)
    def test_by_default_none_of_its_code_runs(
        self, hostile: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
    ) -> None:
        """The archived code differs from the checkout: it is not run, and the audit fails saying so."""
        before = _snapshot(hostile)
        code, report = _report(str(hostile), capsys=capsys)
        assert code == 1 and report["rerun"]["status"] == "SKIPPED" and report["rerun"]["code"] == ""
        assert [p["file"] for p in report["problems"]] == ["sources/"], report["problems"]
        assert "ran:" not in json.dumps(report)
        self._untouched(hostile, before, tmp_path)

    @pytest.mark.slow
    @pytest.mark.timeout(30)
    def test_asked_for_it_runs_contained(
        self, hostile: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
    ) -> None:
        """--execute-archive runs it: it sees no secret, its home, working folder and own folder are temporary
        (gone afterwards), and it wrote nothing into the evidence folder, the auditor's home or working folder."""
        before = _snapshot(hostile)
        code, report = _report(str(hostile), "--execute-archive", capsys=capsys)
        assert code == 1 and report["rerun"]["code"] == "the archived sources"
        (reason,) = [p["reason"] for p in report["problems"] if p["file"] == f"sources/scenarios/{SCENARIO}.py"]
        assert "ran: secret=None " in reason and SECRET not in json.dumps(report)
        seen = dict(part.split("=", 1) for part in reason.split("ran: ", 1)[1].split())
        for place in ("home", "cwd", "file"):
            path = Path(seen[place]).resolve()
            assert path.is_relative_to(Path(tempfile.gettempdir()).resolve()), seen
            assert not path.is_relative_to(hostile.resolve()) and not path.exists(), seen
        self._untouched(hostile, before, tmp_path)


@pytest.mark.timeout(30)
class TestChild:
    """The child process itself, with a stand-in ``lab`` whose ``main`` does one thing."""

    def _code(self, tmp_path: Path, body: str, *, sandboxed: bool = True) -> Code:
        package = tmp_path / "src" / "lab" / "evidence"
        package.mkdir(parents=True)
        for folder in (package, package.parent):
            (folder / "__init__.py").write_text("")
        (package / "rerun.py").write_text(f"import os, sys, json\n\ndef main():\n{body}\n    return 0\n")
        return Code(tmp_path / "src", sandboxed=sandboxed, label="stand-in")

    def test_a_sandboxed_child_sees_only_the_allow_list_and_has_limits(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        monkeypatch.setenv("AGNES_API_KEY", SECRET)
        body = (
            "    import resource\n"
            "    limits = {n: resource.getrlimit(getattr(resource, n))[0] for n in "
            "('RLIMIT_CPU', 'RLIMIT_AS', 'RLIMIT_FSIZE', 'RLIMIT_NOFILE', 'RLIMIT_CORE')}\n"
            "    print(json.dumps({'env': dict(os.environ), 'limits': limits, 'cwd': os.getcwd()}))"
        )
        done = run_child(self._code(tmp_path, body), b"{}", 7.5, sys.executable)
        assert isinstance(done, Finished), done
        seen = json.loads(done.stdout)
        assert set(seen["env"]) <= {*child.ALLOWED_ENVIRONMENT, "HOME", "TMPDIR", "PYTHONDONTWRITEBYTECODE"}
        assert SECRET not in done.stdout.decode()
        assert seen["limits"] == {
            "RLIMIT_CPU": 9,
            "RLIMIT_AS": child.MEMORY_LIMIT,
            "RLIMIT_FSIZE": child.FILE_SIZE_LIMIT,
            "RLIMIT_NOFILE": child.OPEN_FILES_LIMIT,
            "RLIMIT_CORE": 0,
        }
        assert Path(seen["env"]["HOME"]).parent == Path(seen["cwd"]).parent  # one temporary folder, removed
        assert not Path(seen["cwd"]).exists()

    def test_the_checkouts_own_code_keeps_the_environment(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """Trusted code may need what the run needed (LAB_POSTGRES_URL): only the archive's is scrubbed."""
        monkeypatch.setenv("LAB_POSTGRES_URL", "postgresql://x")
        body = "    print(os.environ.get('LAB_POSTGRES_URL'))"
        done = run_child(self._code(tmp_path, body, sandboxed=False), b"{}", 10.0, sys.executable)
        assert isinstance(done, Finished) and done.stdout == b"postgresql://x\n"

    def test_output_is_bounded(self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
        """Printing without end used to be captured without end (300 MB printed, 640 MB peak)."""
        monkeypatch.setattr(child, "OUTPUT_CAP", 1 << 20)
        body = "    chunk = b'x' * 65536\n    while True:\n        os.write(1, chunk)"
        assert run_child(self._code(tmp_path, body), b"{}", 10.0, sys.executable) == (
            "re-execution printed more than 1 MiB; stopped"
        )

    def test_time_is_bounded_and_the_whole_session_ends(self, tmp_path: Path) -> None:
        """A child that starts a process of its own and waits: both are killed at the limit."""
        pid_file = tmp_path / "grandchild.pid"
        body = (
            "    import subprocess, time\n"
            "    p = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)'])\n"
            f"    open({str(pid_file)!r}, 'w').write(str(p.pid))\n"
            "    time.sleep(60)"
        )
        assert run_child(self._code(tmp_path, body, sandboxed=False), b"{}", 0.25, sys.executable) == (
            "re-execution did not finish within 0.25 s"
        )
        if pid_file.exists():  # the child got as far as starting it (on a loaded machine it may not have)
            status = Path(f"/proc/{int(pid_file.read_text())}/status")
            deadline = time.monotonic() + 5  # SIGKILL is delivered, and the process torn down, asynchronously
            while status.exists() and "State:\tZ" not in _read_or_empty(status) and time.monotonic() < deadline:
                time.sleep(0.01)
            if status.exists():  # gone already, or a zombie waiting for its reaper
                assert "State:\tZ" in _read_or_empty(status) or not status.exists()

    def test_a_failure_is_its_last_line_of_stderr(self, tmp_path: Path) -> None:
        body = "    sys.stderr.write('noise\\n' * 100000)\n    raise SystemExit('the real reason')"
        assert run_child(self._code(tmp_path, body), b"{}", 10.0, sys.executable) == (
            "re-execution failed (exit 1): the real reason"
        )


class TestTheAuditorCompares:
    def test_a_childs_own_digest_is_not_believed(self) -> None:
        """A child that prints the recorded digest beside another trace is caught: the auditor hashes the text."""
        trace = b'{"step":0,"actor":"a","op":"start","obj":"","detail":{}}\n'
        expected = Expected(
            name="x",
            trace=trace,
            trace_sha256=hashlib.sha256(trace).hexdigest(),
            requests_sha256=None,
            outcomes={"a": "DONE"},
            verdict="PASS",
            run_status="FINISHED",
        )
        lying = {
            "trace": trace.decode().replace("start", "stArt"),
            "trace_sha256": expected.trace_sha256,
            "requests_sha256": None,
            "outcomes": {"a": "DONE"},
            "verdict": "PASS",
            "run_status": "FINISHED",
        }
        problems = _compare(expected, lying)
        assert [p.file for p in problems] == ["scenarios/x/trace.jsonl"]
        assert "first difference at line 1" in problems[0].reason
        honest = {**lying, "trace": trace.decode()}
        assert _compare(expected, honest) == []


class TestTheFolderIsNeverWritten:
    def test_an_entry_that_appears_during_reexecution_is_named(self, ev: Path, monkeypatch: pytest.MonkeyPatch) -> None:
        """Should re-execution ever write into the folder (the self-audit's did: it ran the archive in place),
        the audit names what appeared."""
        import lab.evidence.verify.auditor as auditor

        def writes(code: Code, *args: Any, **kwargs: Any) -> Any:
            (ev / "sources" / "scenarios" / "left_behind.txt").write_text("x")
            from lab.evidence.records.findings import Rerun, RerunStatus

            return Rerun(RerunStatus.MATCHED, "stand-in", code=code.label), [], None

        monkeypatch.setattr(auditor, "reexecute", writes)
        report = audit(ev)
        assert [str(p) for p in report.problems] == [
            "sources/scenarios/left_behind.txt: appeared in the folder while the audit re-executed it"
        ]

    @pytest.mark.slow
    @pytest.mark.timeout(30)
    def test_the_self_audit_does_not_write_into_the_folder(self, tmp_path: Path) -> None:
        """A scenario that writes beside its own file when imported: the self-audit used to import it from the
        folder's sources/, so run.py said "self-audit ok" and the first independent audit found an extra file."""
        from datetime import UTC, datetime

        from lab.evidence import create_evidence_folder, write_evidence
        from lab.scenarios.loader import LoadedScenario, load
        from lab.scenarios.runner import run_scenario

        root = tmp_path / "checkout"
        shutil.copytree(ROOT / "lab", root / "lab", ignore=shutil.ignore_patterns("__pycache__"))
        (root / "scenarios").mkdir()
        (root / "scenarios" / "writes.py").write_text(WRITES_ON_IMPORT, encoding="utf-8")
        loaded = load(root / "scenarios" / "writes.py")
        assert isinstance(loaded, LoadedScenario), loaded
        now = datetime.now(UTC)
        folder = create_evidence_folder(tmp_path / "ev", started=now)
        report = write_evidence(
            folder,
            [run_scenario(loaded)],
            [],
            root=root,
            command=["run.py", "--out", str(folder)],
            started=now,
            ended=now,
        )
        assert report.ok and report.rerun.status == "MATCHED", report.problems
        independent = audit(folder, checkout=root, rerun=False)
        assert independent.ok, independent.problems


WRITES_ON_IMPORT = '''"""A scenario that leaves a file beside itself whenever it is imported."""

from pathlib import Path

from lab import Scenario, actor, only

Path(__file__).with_name("imported.txt").write_text("x")


class Writes(Scenario):
    source = "tests/test_evidence_trust.py"
    outcomes = only(a="DONE")

    @actor
    def a(self) -> object:
        return "DONE"
'''


class TestTheTrustModelTable:
    def test_every_row_names_tests_that_exist(self) -> None:
        """docs/evidence.md's trust-model table: each row's "tested by" names real test classes and functions."""
        import ast
        import re

        text = (ROOT / "docs" / "evidence.md").read_text(encoding="utf-8")
        section = text.split("## The trust model", 1)[1]
        rows = [
            line for line in section.splitlines() if line.startswith("| ") and not line.startswith(("| check", "| ---"))
        ]
        assert len(rows) >= 10
        defined: dict[str, set[str]] = {}
        for row in rows:
            refs = re.findall(r"`([^`]*::[^`]*)`", row.rsplit("|", 2)[-2])
            assert refs, f"a row names no test: {row[:60]}"
            file = klass = ""
            for ref in refs:
                parts = ref.split("::")
                if parts[0]:
                    file, klass, parts = parts[0], "", parts[1:]
                else:
                    parts = parts[1:]
                if parts[0].startswith("Test"):
                    klass, parts = parts[0], parts[1:]
                if file not in defined:
                    tree = ast.parse((ROOT / "tests" / file).read_text(encoding="utf-8"))
                    defined[file] = {
                        f"{node.name}::{item.name}"
                        for node in tree.body
                        if isinstance(node, ast.ClassDef)
                        for item in node.body
                        if isinstance(item, ast.FunctionDef)
                    } | {node.name for node in tree.body if isinstance(node, ast.ClassDef | ast.FunctionDef)}
                name = klass if not parts else f"{klass}::{parts[0]}" if klass else parts[0]
                assert name in defined[file], f"{file}::{name} (in the trust-model table) is not a test"


class TestTheAuditorRederives:
    def test_an_edited_report_is_caught(self, ev: Path, capsys: pytest.CaptureFixture[str]) -> None:
        """report.md decides nothing, so nothing else checks it: the audit renders it again and compares bytes."""
        report = ev / "report.md"
        report.write_text(report.read_text().replace("| checks |", "| checks (all fine) |", 1))
        reseal(ev)
        code, found = _report(str(ev), "--no-rerun", capsys=capsys)
        assert code == 1
        assert [(p["file"], p["reason"].split(" (")[0]) for p in found["problems"]] == [
            ("report.md", "differs from the report the audit's code makes of these records")
        ]

    def test_run_facts_the_archive_answers_for(self, ev: Path, capsys: pytest.CaptureFixture[str]) -> None:
        """lab_version must be the archived lab's own; network_requests must be 0 (scripted transports only)."""
        record = json.loads((ev / "run.json").read_text())
        record.update(lab_version="9.9.9", network_requests=3)
        (ev / "run.json").write_text(json.dumps(record, sort_keys=True, indent=2) + "\n")
        reseal(ev)
        code, found = _report(str(ev), "--no-rerun", capsys=capsys)
        assert code == 1
        assert [p["reason"] for p in found["problems"] if p["file"] == "run.json"] == [
            "network_requests is 3, but the runner sends none (its transports are scripted)",
            "lab_version is '9.9.9', but the archived lab/__init__.py says '0.1.0'",
        ]

    @pytest.mark.parametrize("command", ["run.py", "lab run"])
    def test_a_failing_scenario_deleted_from_a_full_run_is_caught(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, command: str
    ) -> None:
        """Drop the failing scenario and make run.json add up without it: the command ran every scenario file the
        archive holds, so the list must name them all."""
        import lab.evidence.write.writer as writer

        root = tmp_path / "checkout"
        shutil.copytree(FROZEN / "lab", root / "lab")
        (root / "scenarios").mkdir()
        for name, expect in (("fails", "COMMITTED"), ("passes", "DONE")):
            (root / "scenarios" / f"{name}.py").write_text(
                f'"""A scenario that {name}."""\n\nfrom lab import Scenario, actor, only\n\n\nclass It(Scenario):\n'
                f'    source = "tests"\n    outcomes = only(a="{expect}")\n\n'
                "    @actor\n    def a(self) -> object:\n        return 'DONE'\n",
                encoding="utf-8",
            )
        monkeypatch.setattr(run, "ROOT", root)
        monkeypatch.setattr(run, "SCENARIOS", root / "scenarios")
        real = writer.audit
        monkeypatch.setattr(writer, "audit", lambda path, **options: real(path, **{**options, "rerun": False}))
        folder = tmp_path / "ev"
        if command == "run.py":
            assert run.main(["--out", str(folder)], console=Console(file=io.StringIO())) == 1
        else:  # the one command line, which records itself as ``lab run``
            from lab.cli.app import main as lab_main

            words = ["run", "--scenarios", str(root / "scenarios"), "--out", str(folder)]
            assert lab_main(words, console_out=Console(file=io.StringIO()), root=root) == 1
        shutil.rmtree(folder / "scenarios" / "fails")
        record = json.loads((folder / "run.json").read_text())
        passes = json.loads((folder / "scenarios" / "passes" / "result.json").read_text())
        record.update(scenarios=["passes"], scenario_count=1, status="PASS", transport_calls=0,
                      checks={"passed": len(passes["checks"]), "failed": 0},
                      verdicts={"PASS": 1, "FAIL": 0, "ERROR": 0})  # fmt: skip
        (folder / "run.json").write_text(json.dumps(record, sort_keys=True, indent=2) + "\n")
        reseal(folder)
        reasons = [str(p) for p in audit(folder, checkout=root, rerun=False).problems]
        recorded = json.loads((folder / "run.json").read_text())["command"]
        assert recorded[: len(command.split())] == command.split()
        assert f"run.json: its command ({' '.join(recorded)}) runs fails, passes, but scenarios and broken name " \
               "passes" in reasons  # fmt: skip


def _read_or_empty(path: Path) -> str:
    """A /proc file's text, or "" once the process is gone (between looking and reading)."""
    try:
        return path.read_text()
    except OSError:
        return ""
