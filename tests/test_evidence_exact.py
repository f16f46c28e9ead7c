"""Every field of a record that re-execution or the other records determine is compared, as JSON, exactly.

An adversarial hunt forged folders that re-rendered their reports and resealed ``SHA256SUMS`` and still audited OK:
checks deleted from a result (its totals adjusted), a lesson, expected outcomes and check names rewritten, a state
of ``true`` where the trace says ``1`` (equal for Python's ``==``), exploration ``counts`` inflated, a record with a
key twice (Python keeps the last value, another reader the first), a negative ``duration_seconds``. Each test here
forges one such folder and names the problem the audit must now report.
"""

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
from tests.forging import rerender, reseal, rewrite

SCENARIO = "out_of_order_commit"
RESULT = f"scenarios/{SCENARIO}/result.json"
RACE = "explore/race_two_requests/probe.VersionedSession.json"


@pytest.fixture(scope="module", autouse=True)
def _frozen() -> Iterator[Path]:
    with frozen_checkout() as path:
        yield path


def _run(folder: Path, *words: str) -> Path:
    import lab.evidence.write.writer as writer

    real = writer.audit
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(writer, "audit", lambda path, **options: real(path, **{**options, "rerun": False}))
        assert run.main(["--out", str(folder), *words], console=Console(file=io.StringIO())) == 0
    return folder


@pytest.fixture(scope="module")
def written(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _run(tmp_path_factory.mktemp("exact") / "ev", "--scenario", SCENARIO)


@pytest.fixture()
def ev(written: Path, tmp_path: Path) -> Path:
    return Path(shutil.copytree(written, tmp_path / "ev"))


def _forge(folder: Path, rel: str, change: Callable[[dict[str, Any]], None]) -> None:
    record = json.loads((folder / rel).read_text(encoding="utf-8"))
    change(record)
    rewrite(folder, rel, record)
    rerender(folder)
    reseal(folder)


def _problems(folder: Path, **options: Any) -> list[str]:
    report = audit(folder, **options)
    assert report.ok == (not report.problems)
    return [str(problem) for problem in report.problems]


class TestResultFieldsAreReexecuted:
    @pytest.mark.slow
    @pytest.mark.timeout(120)
    def test_checks_deleted_with_the_totals_adjusted(self, ev: Path) -> None:
        def drop(record: dict[str, Any]) -> None:
            record["checks"] = record["checks"][:1]

        kept = json.loads((ev / RESULT).read_text())["checks"][0]
        _forge(ev, RESULT, drop)
        _forge(ev, "run.json", lambda record: record["checks"].update(passed=1))
        assert _problems(ev) == [f"{RESULT}: re-execution gave 6 checks; recorded 1"]
        assert kept["name"] == "run ends FINISHED"

    @pytest.mark.slow
    @pytest.mark.timeout(120)
    def test_words_rewritten(self, ev: Path) -> None:
        def reword(record: dict[str, Any]) -> None:
            record["lesson"] = "Nothing to see here."
            record["mutant"] = True
            record["expect"] = {"fast": "COMMITTED", "slow": "COMMITTED"}
            record["checks"][1]["name"] = "slow -> COMMITTED"
            record["checks"][2]["kind"] = "state"
            record["actors"] = ["fast", "slow"]
            record["errors"] = {"slow": "Traceback: forged"}
            record["store"] = "sqlite:lessons"

        _forge(ev, RESULT, reword)
        reasons = [reason.split(": re-execution gave ", 1)[1] for reason in _problems(ev)]
        assert [reason.split(" ")[0] for reason in reasons] == [
            "actors", "checks", "errors", "expect", "lesson", "mutant", "store"
        ]  # fmt: skip
        assert reasons[1].startswith('checks item 2 {"kind": "outcome", "name": "slow -> STALE"')
        assert reasons[5] == "mutant false; recorded true"

    @pytest.mark.slow
    @pytest.mark.timeout(120)
    def test_a_field_the_lab_never_writes(self, ev: Path) -> None:
        _forge(ev, RESULT, lambda record: record.update(note="reviewed and approved"))
        assert _problems(ev) == [
            f"{RESULT}: has a field the lab never writes: note",
            f"{RESULT}: re-execution gave note no such field; recorded reviewed and approved",
        ]

    @pytest.mark.slow
    @pytest.mark.timeout(120)
    def test_a_granularity_the_run_did_not_use(self, ev: Path) -> None:
        _forge(ev, RESULT, lambda record: record.update(granularity=""))
        assert _problems(ev) == [f"{RESULT}: re-execution gave granularity probe; recorded "]

    def test_true_is_not_the_ones_the_trace_records(self, ev: Path) -> None:
        """``{"version": true}`` equals ``{"version": 1}`` for Python: compared as JSON, it does not."""
        _forge(ev, RESULT, lambda record: record["state"].update(version=True))
        assert _problems(ev, rerun=False) == [f"{RESULT}: state differs from the trace's final event"]


class TestRunTotalsAndFacts:
    def test_a_verdict_count_of_false(self, ev: Path) -> None:
        _forge(ev, "run.json", lambda record: record["verdicts"].update(SKIPPED=False))
        assert _problems(ev, rerun=False) == [
            'run.json: verdicts {"ERROR": 0, "FAIL": 0, "PASS": 1, "SKIPPED": false} differ from the results\' '
            "{'PASS': 1, 'FAIL': 0, 'ERROR': 0, 'SKIPPED': 0}"
        ]

    def test_a_duration_that_is_not_ended_minus_started(self, ev: Path) -> None:
        _forge(ev, "run.json", lambda record: record.update(duration_seconds=-1))
        assert _problems(ev, rerun=False)[0].startswith("run.json: duration_seconds is -1, but ended - started is ")

    def test_a_time_not_written_as_the_lab_writes_it(self, ev: Path) -> None:
        _forge(ev, "run.json", lambda record: record.update(ended=record["ended"][:19]))
        assert _problems(ev, rerun=False) == [
            "run.json: started or ended is not a UTC time written as the lab writes it (ISO 8601, microseconds, Z)"
        ]

    @pytest.mark.parametrize(
        "git",
        [
            {"commit": 1, "dirty": False},
            {"commit": "a" * 40, "dirty": 0},
            {"commit": "a" * 40, "dirty": False, "changed_files": 3},
            {"commit": "a" * 40, "dirty": True, "changed_files": True},
            {"commit": "a" * 40, "dirty": False, "changed_files": 0, "branch": "main"},
            {"commit": "HEAD", "dirty": False},
        ],
    )
    def test_git_of_the_wrong_kind(self, ev: Path, git: dict[str, Any]) -> None:
        _forge(ev, "run.json", lambda record: record.update(git=git))
        problems = _problems(ev, rerun=False)
        assert len(problems) == 1 and problems[0].startswith("run.json: field 'git' is "), problems
        assert problems[0].endswith(", not null or {commit: a hex commit, dirty: true or false, changed_files: a "
                                    "count, none exactly when not dirty}")  # fmt: skip

    def test_git_as_the_lab_writes_it(self, ev: Path) -> None:
        for git in (
            None,
            {"commit": "a" * 40, "dirty": False},
            {"commit": "b" * 64, "dirty": True, "changed_files": 2},
        ):
            _forge(ev, "run.json", lambda record, git=git: record.update(git=git))
            assert _problems(ev, rerun=False) == []


class TestRecordsAreReadOneWay:
    def test_a_key_twice(self, ev: Path) -> None:
        """A reader that keeps the first value sees FAIL, Python keeps the last: such a record is refused."""
        path = ev / "run.json"
        path.write_text(path.read_text().replace("{\n", '{\n  "status": "FAIL",\n', 1))
        reseal(ev)
        assert _problems(ev, rerun=False) == [
            'run.json: is not usable JSON: it names the key "status" twice in one object'
        ]

    def test_a_record_not_written_as_the_lab_writes_it(self, ev: Path) -> None:
        record = json.loads((ev / RESULT).read_text())
        (ev / RESULT).write_text(json.dumps(record, indent=4) + "\n")
        reseal(ev)
        assert _problems(ev, rerun=False) == [
            f"{RESULT}: is not written the way the lab writes records (sorted keys, two-space indent, UTF-8, newline)"
        ]


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_exploration_counts_are_reexplored(tmp_path: Path) -> None:
    ev = _run(tmp_path / "ev", "--explore", "--scenario", "race_two_requests", "--variant", "VersionedSession")
    assert _problems(ev) == []

    def inflate(record: dict[str, Any]) -> None:
        record["counts"].update({"naive count": 2, "distinct interleaving classes": 1})

    _forge(ev, RACE, inflate)
    reasons = _problems(ev)
    assert len(reasons) == 1 and reasons[0].startswith(f"{RACE}: re-exploration gave counts "), reasons
