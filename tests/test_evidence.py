"""The evidence writer: a new folder, exactly its files, repeatable bytes, fingerprints and a report GitHub draws."""

from __future__ import annotations

import hashlib
import io
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest
from rich.console import Console

from lab.engine.core import TraceEvent
from lab.errors import UsageError
from lab.evidence import audit, create_evidence_folder, write_evidence
from lab.evidence.records.manifest import format_sums, parse_sums
from lab.evidence.records.safefs import path_problem
from lab.evidence.records.sources import collect, combined_digest, digests, source_digest
from lab.evidence.report.mermaid import sequence_diagram
from lab.scenarios.loader import BrokenScenario, LoadedScenario, load, load_all
from lab.scenarios.runner import run_scenario
from tests.evidence_checkout import frozen_checkout

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import run  # noqa: E402  (run.py lives at the repository root, put on the path just above)

SCENARIO = "out_of_order_commit"


@pytest.fixture(scope="module", autouse=True)
def _frozen() -> Iterator[Path]:
    """Write from, and audit against, one frozen copy of the checkout (see tests/evidence_checkout.py)."""
    with frozen_checkout() as path:
        yield path


ASKS = '''"""Two questions through one scripted model: both requests are sent, both replies commit.

A scenario of the evidence tests: it sends requests, so its folder has a requests.jsonl.
"""

from lab import Reply, Scenario, TransactionalChat, actor, chat_state, only


class Asks(Scenario):
    source = "tests/test_evidence.py"
    outcomes = only(first="COMMITTED", second="COMMITTED")

    def setup(self) -> None:
        replies = {"q1; #1": Reply("a1", "stop"), "q2 \\"quoted\\"": Reply("a2", "stop")}
        self.model = self.lab.transport("model", by_question=replies)
        self.chat = TransactionalChat(self.model, lock=self.lab.lock("chat.lock"), probe=self.lab.probe("chat"))

    @actor
    def first(self) -> object:
        return self.chat.ask("q1; #1")

    @actor
    def second(self) -> object:
        return self.chat.ask('q2 "quoted"')

    def observe(self) -> dict[str, object]:
        return chat_state(self.chat)
'''

FAILING = {
    "broken": "x = (\n",
    "raises": '''"""Setup raises, so the scenario is an ERROR.

A test scenario.
"""

from lab import Scenario, actor


class Raises(Scenario):
    source = "tests"

    def setup(self) -> None:
        raise ValueError("no world today")

    @actor
    def a(self) -> None:
        pass
''',
    "actor_raises": '''"""An actor raises: its outcome is ERROR.

A test scenario.
"""

from lab import Scenario, actor


class ActorRaises(Scenario):
    source = "tests"

    @actor
    def a(self) -> None:
        raise KeyError("x")

    @actor
    def b(self) -> None:
        pass
''',
    "spins": '''"""An actor that spins outside the lab is reported as HUNG.

A test scenario.
"""

from lab import Scenario, actor


class Spins(Scenario):
    source = "tests"

    def setup(self) -> None:
        self.lock = self.lab.lock("l")

    @actor
    def spinner(self) -> None:
        with self.lock:
            while True:
                pass

    @actor
    def other(self) -> None:
        with self.lock:
            pass
''',
}


def _run(out: Path, *names: str) -> int:
    args = ["--out", str(out)] + [arg for name in names for arg in ("--scenario", name)]
    return run.main(args, console=Console(file=io.StringIO()))


def _files(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


@pytest.fixture(scope="module")
def evidence(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("evidence") / "ev"
    assert _run(folder, SCENARIO) == 0
    return folder


@pytest.fixture(scope="module")
def asks_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A small checkout: the lab package and one scenario that sends requests."""
    root = tmp_path_factory.mktemp("checkout")
    shutil.copytree(ROOT / "lab", root / "lab", ignore=shutil.ignore_patterns("__pycache__"))
    (root / "scenarios").mkdir()
    (root / "scenarios" / "asks.py").write_text(ASKS, encoding="utf-8")
    return root


def _write_asks(root: Path, folder: Path) -> None:
    loaded = load(root / "scenarios" / "asks.py")
    assert isinstance(loaded, LoadedScenario), loaded
    now = datetime.now(UTC)
    report = write_evidence(
        create_evidence_folder(folder),
        [run_scenario(loaded)],
        [],
        root=root,
        command=["run.py", "--out", str(folder)],
        started=now,
        ended=now,
    )
    assert report.ok, report.problems


@pytest.mark.timeout(30)
class TestCreateEvidenceFolder:
    def test_creates_a_new_folder_holding_only_started_json(self, tmp_path: Path) -> None:
        """A new name becomes a new folder whose one file says when the run started, in the folder's format."""
        folder = create_evidence_folder(tmp_path / "new", started=datetime(2026, 1, 2, 3, 4, 5, 6, tzinfo=UTC))
        assert [p.name for p in folder.iterdir()] == ["started.json"]
        assert json.loads((folder / "started.json").read_text()) == {
            "format": "concurrency-lab-evidence/1",
            "started": "2026-01-02T03:04:05.000006Z",
        }

    @pytest.mark.parametrize("kind", ["empty folder", "folder with a file", "file"])
    def test_an_existing_path_is_refused_and_untouched(self, tmp_path: Path, kind: str) -> None:
        """An existing folder, even empty, or a file, is a usage error; nothing in it changes."""
        target = tmp_path / "taken"
        if kind == "file":
            target.write_text("mine")
        else:
            target.mkdir()
            if kind == "folder with a file":
                (target / "keep.txt").write_text("mine")
        before = _snapshot(tmp_path)
        with pytest.raises(UsageError, match="already exists"):
            create_evidence_folder(target)
        assert _snapshot(tmp_path) == before

    def test_a_missing_parent_is_refused_and_not_created(self, tmp_path: Path) -> None:
        """The lab never creates folders the user did not name."""
        with pytest.raises(UsageError, match="is not an existing folder"):
            create_evidence_folder(tmp_path / "missing" / "ev")
        assert not (tmp_path / "missing").exists()

    def test_run_exits_2_for_an_existing_empty_folder(self, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
        """run.py turns the refusal into exit code 2 and one line, writing nothing."""
        (tmp_path / "ev").mkdir()
        before = _snapshot(tmp_path)
        assert _run(tmp_path / "ev", SCENARIO) == 2
        assert _snapshot(tmp_path) == before
        err = capsys.readouterr().err
        assert "already exists" in err and len(err.strip().splitlines()) == 1

    def test_run_exits_2_for_a_missing_parent(self, tmp_path: Path) -> None:
        """No folder is created along the way."""
        assert _run(tmp_path / "nope" / "ev", SCENARIO) == 2
        assert list(tmp_path.iterdir()) == []


@pytest.mark.timeout(30)
class TestFolder:
    @pytest.mark.slow
    def test_holds_exactly_the_documented_files(self, evidence: Path) -> None:
        """Top-level records, one scenario folder, and the sources that ran."""
        names = set(_files(evidence))
        top = {n for n in names if "/" not in n}
        assert top == {
            "started.json",
            "run.json",
            "sources.json",
            "report.md",
            "report.html",
            "audit.json",
            "SHA256SUMS",
        }
        assert {n for n in names if n.startswith("scenarios/")} == {
            f"scenarios/{SCENARIO}/trace.jsonl",
            f"scenarios/{SCENARIO}/result.json",
        }
        sources = {n.removeprefix("sources/") for n in names if n.startswith("sources/")}
        assert {
            "run.py",
            "audit.py",
            "pyproject.toml",
            "lab/evidence/reexecute/rerun.py",
            f"scenarios/{SCENARIO}.py",
        } <= sources
        assert not any("__pycache__" in n for n in names)

    @pytest.mark.slow
    def test_a_fresh_folder_audits_clean(self, evidence: Path) -> None:
        """The library audit, re-execution included, finds nothing."""
        report = audit(evidence, checkout=None)
        assert report.ok, report.problems
        assert report.rerun.status == "MATCHED"
        assert json.loads((evidence / "audit.json").read_text())["ok"] is True

    def test_sha256sums_covers_every_other_file_sorted(self, evidence: Path) -> None:
        """Two spaces, sorted paths, one line per file except itself, each digest right."""
        files = _files(evidence)
        lines = files.pop("SHA256SUMS").decode().splitlines()
        assert [line.split("  ", 1)[1] for line in lines] == sorted(files)
        for line in lines:
            digest, path = line.split("  ", 1)
            assert hashlib.sha256(files[path]).hexdigest() == digest

    def test_sha256sum_check_passes(self, evidence: Path) -> None:
        """coreutils verifies the folder as it stands."""
        if shutil.which("sha256sum") is None:
            pytest.skip("sha256sum is not installed")
        done = subprocess.run(
            ["sha256sum", "-c", "--quiet", "SHA256SUMS"],
            cwd=evidence,
            capture_output=True,
            text=True,
            check=False,
            timeout=20,
        )
        assert done.returncode == 0, done.stdout + done.stderr

    def test_json_is_canonical(self, evidence: Path) -> None:
        """Sorted keys, UTF-8, two-space indent, a trailing newline."""
        for name in ("run.json", "sources.json", "audit.json", f"scenarios/{SCENARIO}/result.json"):
            text = (evidence / name).read_text(encoding="utf-8")
            assert text == json.dumps(json.loads(text), sort_keys=True, ensure_ascii=False, indent=2) + "\n"

    def test_run_json_totals(self, evidence: Path) -> None:
        """run.json counts what the results hold, and names the run's provenance."""
        run_record = json.loads((evidence / "run.json").read_text())
        result = json.loads((evidence / f"scenarios/{SCENARIO}/result.json").read_text())
        assert run_record["scenarios"] == [SCENARIO] and run_record["scenario_count"] == 1
        assert run_record["checks"] == {"passed": len(result["checks"]), "failed": 0}
        assert run_record["status"] == "PASS" and run_record["network_requests"] == 0
        assert run_record["command"][:2] == ["run.py", "--out"]
        assert set(run_record["python"]) == {"implementation", "version"}

    def test_timing_lives_only_in_result_timing(self, evidence: Path) -> None:
        """The trace holds no clock; result.json keeps seconds under timing."""
        result = json.loads((evidence / f"scenarios/{SCENARIO}/result.json").read_text())
        assert set(result["timing"]) == {"seconds"}
        assert b"seconds" not in (evidence / f"scenarios/{SCENARIO}/trace.jsonl").read_bytes()

    def test_report_has_a_table_and_a_diagram(self, evidence: Path) -> None:
        """report.md summarises the run and draws the scenario's trace."""
        text = (evidence / "report.md").read_text(encoding="utf-8")
        checks = len(json.loads((evidence / f"scenarios/{SCENARIO}/result.json").read_text())["checks"])
        assert f"| [{SCENARIO}](#{SCENARIO}) | PASS | slow: STALE, fast: COMMITTED | {checks}/{checks} |" in text
        assert "```mermaid\nsequenceDiagram\n    participant a0 as slow\n    participant a1 as fast\n" in text
        assert "<br>ends COMMITTED\n" in text


@pytest.mark.timeout(60)
class TestRepeatability:
    @pytest.mark.slow
    def test_two_runs_write_identical_traces(self, evidence: Path, tmp_path: Path) -> None:
        """Only times and paths may differ between two runs of the same source."""
        again = tmp_path / "again"
        assert _run(again, SCENARIO) == 0
        first, second = _files(evidence), _files(again)
        assert first[f"scenarios/{SCENARIO}/trace.jsonl"] == second[f"scenarios/{SCENARIO}/trace.jsonl"]
        assert first["sources.json"] == second["sources.json"]
        drop = ("timing",)
        one, two = (json.loads(f[f"scenarios/{SCENARIO}/result.json"]) for f in (first, second))
        assert {k: v for k, v in one.items() if k not in drop} == {k: v for k, v in two.items() if k not in drop}

    @pytest.mark.slow
    def test_requests_are_written_byte_for_byte_and_repeatably(self, asks_root: Path, tmp_path: Path) -> None:
        """requests.jsonl is each body as sent plus a newline, identical across runs."""
        _write_asks(asks_root, tmp_path / "one")
        _write_asks(asks_root, tmp_path / "two")
        one, two = _files(tmp_path / "one"), _files(tmp_path / "two")
        for name in ("scenarios/asks/requests.jsonl", "scenarios/asks/trace.jsonl"):
            assert one[name] == two[name]
        bodies = one["scenarios/asks/requests.jsonl"].split(b"\n")
        assert len(bodies) == 3 and bodies[-1] == b""
        assert [json.loads(body)["messages"][-1]["content"] for body in bodies[:2]] == ["q1; #1", 'q2 "quoted"']
        assert json.loads(one["scenarios/asks/result.json"])["requests"] == 2

    @pytest.mark.slow
    def test_a_failed_run_is_still_verifiable_evidence(self, tmp_path: Path) -> None:
        """Broken files, a raising setup, a raising actor and a hang: status FAIL, and the folder audits clean."""
        root = tmp_path / "checkout"
        shutil.copytree(ROOT / "lab", root / "lab", ignore=shutil.ignore_patterns("__pycache__"))
        (root / "scenarios").mkdir()
        for name, text in FAILING.items():
            (root / "scenarios" / f"{name}.py").write_text(text, encoding="utf-8")
        items = load_all(root / "scenarios")
        results = [run_scenario(i, watchdog_seconds=0.2) for i in items if isinstance(i, LoadedScenario)]
        broken = [i for i in items if isinstance(i, BrokenScenario)]
        now = datetime.now(UTC)
        folder = create_evidence_folder(tmp_path / "ev")
        written = write_evidence(
            folder, results, broken, root=root, command=["run.py", "--out", str(folder)], started=now, ended=now
        )
        assert written.ok, written.problems
        record = json.loads((folder / "run.json").read_text())
        assert record["status"] == "FAIL" and record["verdicts"] == {"PASS": 0, "FAIL": 2, "ERROR": 1, "SKIPPED": 0}
        assert [b["file"] for b in record["broken"]] == ["broken.py"]
        hung = json.loads((folder / "scenarios/spins/result.json").read_text())
        assert hung["run_status"] == "HUNG" and hung["outcomes"] == {"other": "HUNG", "spinner": "HUNG"}
        errored = json.loads((folder / "scenarios/raises/result.json").read_text())
        assert (folder / "scenarios/raises/trace.jsonl").read_bytes() == b""
        assert str(root) not in errored["errors"]["lab"]
        report = audit(folder, checkout=root)
        assert report.ok, report.problems
        assert report.rerun.status == "MATCHED" and report.drift is not None and report.drift.files == 0


class TestFingerprints:
    def test_crlf_and_cr_hash_like_lf(self) -> None:
        """A CRLF checkout fingerprints exactly like an LF one."""
        assert source_digest(b"a\r\nb\rc\n") == source_digest(b"a\nb\nc\n")
        assert source_digest(b"a\nb\n") != source_digest(b"a\nb")

    def test_a_crlf_checkout_has_the_same_combined_digest(self, tmp_path: Path) -> None:
        """Converting every source to CRLF changes no fingerprint."""
        lf, crlf = tmp_path / "lf", tmp_path / "crlf"
        for root, ending in ((lf, b"\n"), (crlf, b"\r\n")):
            (root / "lab" / "__pycache__").mkdir(parents=True)
            (root / "scenarios").mkdir()
            (root / "lab" / "__init__.py").write_bytes(b'"""Lab."""' + ending + b"x = 1" + ending)
            (root / "lab" / "__pycache__" / "junk.py").write_bytes(b"skipped")
            (root / "scenarios" / "one.py").write_bytes(b"y = 2" + ending)
            (root / "run.py").write_bytes(b"z = 3" + ending)
        assert [f.path for f in collect(lf)] == ["lab/__init__.py", "run.py", "scenarios/one.py"]
        assert combined_digest(digests(collect(lf))) == combined_digest(digests(collect(crlf)))

    def test_combined_digest_is_sha256_of_the_sums_lines(self) -> None:
        """The documented definition, spelled out."""
        text = f"{'b' * 64}  a.py\n{'a' * 64}  b.py\n"
        assert combined_digest({"b.py": "a" * 64, "a.py": "b" * 64}) == hashlib.sha256(text.encode()).hexdigest()


class TestManifest:
    def test_round_trip(self) -> None:
        """What format_sums writes, parse_sums reads back."""
        sums = {"b/c.json": "0" * 64, "a.txt": "f" * 64}
        assert format_sums(sums) == f"{'f' * 64}  a.txt\n{'0' * 64}  b/c.json\n".encode()
        assert parse_sums(format_sums(sums)) == (sums, [])

    def test_unsafe_and_malformed_lines_are_reported_not_used(self) -> None:
        """Every bad line is named; only safe paths are returned."""
        data = (
            f"{'a' * 64}  ../../etc/passwd\n{'a' * 64}  /etc/passwd\nnot a line\n"
            f"{'a' * 64}  ok.txt\n{'b' * 64}  ok.txt\n{'c' * 64}  cut"
        ).encode()
        entries, reasons = parse_sums(data)
        assert entries == {"ok.txt": "a" * 64}
        assert len(reasons) == 5
        assert "leaves the folder" in reasons[1] and "absolute" in reasons[2] and "second time" in reasons[4]
        assert "truncated" in reasons[0]

    @pytest.mark.parametrize("path", ["", "/abs", "a/../b", "./a", "a//b", "a\\b", "a\nb", "C:x"])
    def test_unsafe_paths(self, path: str) -> None:
        """Anything but a plain relative path is refused."""
        assert path_problem(path)


class TestMermaid:
    def test_a_small_trace(self) -> None:
        """One lane per actor, a note per turn; probes fold; a wait activates the lifeline until the arrow from the
        actor that opened the latch; text is escaped with entity codes."""
        events = [
            TraceEvent(0, "slow", "start"),
            TraceEvent(1, "slow", "probe", "s1", {"point": "commit:enter"}),
            TraceEvent(2, "slow", "probe", "s1", {"point": "commit:checked"}),
            TraceEvent(3, "slow", "latch.wait", "go", {"blocked": True, "remaining": 1}),
            TraceEvent(4, "fast", "note", "", {"text": 'say "hi"; #1 <b>'}),
            TraceEvent(5, "fast", "latch.count_down", "go", {"remaining": 0}),
            TraceEvent(6, "fast", "end", "", {"outcome": "COMMITTED"}),
            TraceEvent(7, "slow", "latch.open", "go"),
            TraceEvent(8, "slow", "error", "", {"type": "ValueError"}),
            TraceEvent(9, "lab", "final", "", {"version": 1}),
        ]
        assert sequence_diagram(events, ["slow", "fast"]) == (
            "sequenceDiagram\n"
            "    participant a0 as slow\n"
            "    participant a1 as fast\n"
            "    Note over a0: starts<br>probe commit:enter, commit:checked on s1<br>waits for latch go (1 to go)\n"
            "    activate a0\n"
            "    Note over a1: say #34;hi#34;#59; #35;1 #60;b#62;<br>latch.count_down go (remaining=0)<br>"
            "ends COMMITTED\n"
            "    deactivate a0\n"
            "    a1-->>a0: latch.open go\n"
            "    Note over a0: raised ValueError\n"
            "    Note over a0,a1: final state {#34;version#34;: 1}\n"
        )

    def test_a_long_trace_is_cut_with_a_note(self) -> None:
        """Past the limit, the diagram points at trace.jsonl."""
        events = [TraceEvent(i, "a", "lock.acquire" if i % 2 else "lock.release", "l") for i in range(300)]
        text = sequence_diagram(events, ["a"])
        assert text.endswith("    Note over a0: 50 more events, see trace.jsonl\n")


def _snapshot(folder: Path) -> dict[str, tuple[int, int]]:
    found = {}
    for dirpath, dirnames, filenames in os.walk(folder):
        for name in dirnames + filenames:
            info = os.lstat(os.path.join(dirpath, name))
            found[os.path.relpath(os.path.join(dirpath, name), folder)] = (info.st_mtime_ns, info.st_size)
    return found
