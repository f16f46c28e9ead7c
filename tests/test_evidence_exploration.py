"""Exploration in evidence folders: its records, the kill matrix, run.json's summary and the report, audited."""

from __future__ import annotations

import json
import shutil
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from lab.errors import UsageError
from lab.evidence import AuditReport, audit, create_evidence_folder, write_evidence
from lab.evidence.records import layout
from lab.evidence.records.exploration import parse_exploration_path, plan_exploration, summary_fails
from lab.evidence.reexecute.reexplore import ExpectedExploration
from lab.evidence.reexecute.rerun import BASE_TIMEOUT_SECONDS, default_timeout
from lab.scenarios.exploring import ExploreVerdict, ScenarioExploration, explore_scenario
from lab.scenarios.kill_matrix import KillMatrix, build_kill_matrix
from lab.scenarios.loader import LoadedScenario, load
from lab.scenarios.runner import ScenarioResult, run_scenario
from tests.evidence_checkout import FROZEN, frozen_checkout
from tests.forging import reseal
from tests.test_evidence_schema import field_report

SETTINGS = {"granularities": ["probe", "line"], "preemption_bound": None, "max_schedules": 20_000}
RACE = "explore/race_two_requests/probe.VersionedSession.json"
RACE_LINE = "explore/race_two_requests/line.VersionedSession.json"
MUTANT = "explore/race_two_requests/probe.CheckOutsideLockSession.json"
LATCHED = "explore/out_of_order_commit/probe.json"
LATCHED_LINE = "explore/out_of_order_commit/line.json"
WORDS = ["--explore", "--granularity", "both", "--scenario", "race_two_requests", "--scenario", "out_of_order_commit"]
"""The command the module's folder records, and the one its records are what it makes."""
MUTANT_WORDS = ["--explore", "--variant", "CheckOutsideLockSession", "--scenario", "race_two_requests"]
MUTANT_SETTINGS = {"granularities": ["probe"], "preemption_bound": None, "max_schedules": 20_000}
MATRIX = "explore/kill-matrix.json"
REPORTS = ("report.md", "report.html")


@pytest.fixture(scope="module", autouse=True)
def _frozen() -> Iterator[Path]:
    """Write from, and audit against, one frozen copy of the checkout (see tests/evidence_checkout.py)."""
    with frozen_checkout() as path:
        yield path


@dataclass(frozen=True)
class Explored:
    """What a run with --explore hands the writer, built once for the module."""

    results: list[ScenarioResult]
    explorations: list[ScenarioExploration]
    matrix: KillMatrix | None


def _load(name: str) -> LoadedScenario:
    loaded = load(FROZEN / "scenarios" / f"{name}.py")
    assert isinstance(loaded, LoadedScenario), loaded
    return loaded


def _explore() -> Explored:
    """What ``run.py`` with :data:`WORDS` makes: each scenario at both granularities, and the kill matrix of the one
    race scenario among them (partial: the checkout has others)."""
    race, latched = _load("race_two_requests"), _load("out_of_order_commit")
    explorations = [
        explore_scenario(race, granularity="probe"),
        explore_scenario(race, granularity="line"),
        explore_scenario(latched, granularity="probe"),
        explore_scenario(latched, granularity="line"),
    ]
    matrix = build_kill_matrix([race], partial=True)
    return Explored([run_scenario(race), run_scenario(latched)], explorations, matrix)


def _explore_mutant() -> Explored:
    """What ``run.py`` with :data:`MUTANT_WORDS` makes: one exploration over a mutant, which FAILs, and no matrix."""
    race = _load("race_two_requests")
    found = explore_scenario(race, granularity="probe", variant="CheckOutsideLockSession")
    return Explored([run_scenario(race)], [found], None)


def _write(
    folder: Path, explored: Explored, words: list[str] = WORDS, settings: Any = SETTINGS, **options: Any
) -> AuditReport:
    now = datetime.now(UTC)
    arguments: dict[str, Any] = {
        "explorations": explored.explorations,
        "kill_matrix": explored.matrix,
        "explore_settings": settings,
        **options,
    }
    return write_evidence(
        create_evidence_folder(folder),
        explored.results,
        [],
        root=FROZEN,
        command=["run.py", *words, "--out", str(folder)],
        started=now,
        ended=now,
        **arguments,
    )


@pytest.fixture(scope="module")
def explored() -> Explored:
    return _explore()


@pytest.fixture(scope="module")
def pristine(tmp_path_factory: pytest.TempPathFactory, explored: Explored) -> Path:
    folder = tmp_path_factory.mktemp("explored") / "ev"
    report = _write(folder, explored)
    assert report.ok, report.problems
    return folder


@pytest.fixture()
def ev(pristine: Path, tmp_path: Path) -> Path:
    """A private copy of the module's folder, free to tamper with."""
    return Path(shutil.copytree(pristine, tmp_path / "ev", symlinks=True))


@pytest.fixture(scope="module")
def mutant(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The folder of one exploration over a mutant (``--variant``): a FAIL with a counterexample."""
    folder = tmp_path_factory.mktemp("mutant") / "ev"
    report = _write(folder, _explore_mutant(), MUTANT_WORDS, MUTANT_SETTINGS)
    assert report.ok, report.problems
    return folder


@pytest.fixture()
def mev(mutant: Path, tmp_path: Path) -> Path:
    """A private copy of the mutant's folder."""
    return Path(shutil.copytree(mutant, tmp_path / "mev", symlinks=True))


def _json(path: Path) -> Any:
    return json.loads(path.read_text(encoding="utf-8"))


def _edit(folder: Path, rel: str, change: Any) -> None:
    """Change one record, write it back the way the lab writes JSON, and cover the tracks in SHA256SUMS."""
    record = _json(folder / rel)
    change(record)
    (folder / rel).write_text(json.dumps(record, sort_keys=True, ensure_ascii=False, indent=2) + "\n", encoding="utf-8")
    reseal(folder)


def _reasons(report: AuditReport, file: str) -> list[str]:
    return [problem.reason for problem in report.problems if problem.file == file]


def _snapshot(folder: Path) -> dict[str, tuple[int, int]]:
    return {p.relative_to(folder).as_posix(): (p.stat().st_mtime_ns, p.stat().st_size) for p in folder.rglob("*")}


def _without_timing(data: bytes) -> Any:
    record = json.loads(data)
    record.pop("timing", None)
    return record


@pytest.mark.timeout(60)
class TestFolder:
    @pytest.mark.slow
    def test_holds_one_record_per_exploration_and_the_kill_matrix(self, pristine: Path) -> None:
        """explore/<scenario>/<granularity>[.<variant>].json, and explore/kill-matrix.json."""
        found = {p.relative_to(pristine).as_posix() for p in (pristine / "explore").rglob("*") if p.is_file()}
        assert found == {RACE, RACE_LINE, LATCHED, LATCHED_LINE, MATRIX}

    @pytest.mark.slow
    def test_audits_clean_with_reexploration(self, pristine: Path) -> None:
        """The archive explores everything again and rebuilds the matrix: nothing differs."""
        report = audit(pristine)
        assert report.ok, report.problems
        assert report.rerun.status == "MATCHED" and report.rerun.explorations == 4
        assert report.rerun.note == (
            "2 scenarios, 4 explorations and the kill matrix re-executed with the auditing checkout's code "
            "(identical to sources/): byte-identical traces, same outcomes and verdicts; the same verdicts, counts, "
            "rows and counterexamples; the same kill-matrix cells"
        )
        assert _json(pristine / "audit.json")["ok"] is True

    @pytest.mark.slow
    def test_the_audit_writes_nothing_into_the_folder(self, ev: Path) -> None:
        """Re-exploring from sources/ leaves every entry as it was, and no __pycache__."""
        before = _snapshot(ev)
        assert audit(ev).ok
        assert _snapshot(ev) == before and not any("__pycache__" in name for name in before)

    def test_sha256sum_check_passes(self, pristine: Path, mutant: Path) -> None:
        """coreutils verifies the exploration files like every other file."""
        if shutil.which("sha256sum") is None:
            pytest.skip("sha256sum is not installed")
        done = subprocess.run(
            ["sha256sum", "-c", "--quiet", "SHA256SUMS"],
            cwd=mutant,
            capture_output=True,
            text=True,
            check=False,
            timeout=20,
        )
        assert done.returncode == 0, done.stdout + done.stderr
        assert f"  {MUTANT}\n" in (mutant / "SHA256SUMS").read_text(encoding="utf-8")
        assert f"  {MATRIX}\n" in (pristine / "SHA256SUMS").read_text(encoding="utf-8")

    def test_a_record_holds_rows_outcomes_and_the_counterexample(self, mutant: Path) -> None:
        """Canonical JSON; the naive bound as a string; time only under timing."""
        text = (mutant / MUTANT).read_text(encoding="utf-8")
        assert text == json.dumps(json.loads(text), sort_keys=True, ensure_ascii=False, indent=2) + "\n"
        record = json.loads(text)
        assert (record["verdict"], record["naive_bound"]) == ("FAIL", "705432")
        assert isinstance(record["pruned"], int) and record["pruned"] >= 0
        assert record["schedules"] == sum(row["schedules"] for row in record["rows"])
        assert [row["grade"] for row in record["rows"]] == ["ACCEPTABLE"] * 3 + ["FORBIDDEN"]
        assert all(row["schedules"] > 0 for row in record["rows"])
        assert record["outcomes"] == sorted(
            record["outcomes"],
            key=lambda o: json.dumps({"observed": o["observed"], "broken": o["broken"]}, sort_keys=True),
        )
        example = record["counterexample"]
        assert example["replayed"] is True and example["observed"]["tickets"] == "same"
        assert record["replay_command"] == (
            f"python -m lab replay race_two_requests:{example['schedule']} --variant CheckOutsideLockSession"
        )
        assert set(record["timing"]) == {"seconds"} and "seconds" not in json.dumps(_without_timing(text.encode()))

    def test_run_json_summarises_and_a_mutants_fail_only_informs(self, pristine: Path, mutant: Path) -> None:
        """Every default variant passes and the partial matrix has no problems: the run passes; so does the run whose
        only exploration is a mutant's FAIL."""
        record = _json(pristine / "run.json")
        summary = record["exploration"]
        assert summary["settings"] == SETTINGS
        assert [(e["file"], e["default_variant"], e["verdict"]) for e in summary["explorations"]] == [
            (RACE, True, "PASS"),
            (RACE_LINE, True, "PASS"),
            (LATCHED, True, "PASS"),
            (LATCHED_LINE, True, "PASS"),
        ]
        assert summary["verdicts"] == {"PASS": 4, "FAIL": 0, "INCOMPLETE": 0}
        matrix = _json(pristine / MATRIX)
        assert matrix["partial"] is True and matrix["scenarios"] == ["race_two_requests"]
        assert summary["kill_matrix"] == {"file": MATRIX, "ok": True, "problems": []}
        assert record["status"] == "PASS"
        record = _json(mutant / "run.json")
        assert [(e["file"], e["default_variant"], e["verdict"]) for e in record["exploration"]["explorations"]] == [
            (MUTANT, False, "FAIL")
        ]
        assert record["exploration"]["kill_matrix"] is None and record["status"] == "PASS"

    def test_report_has_outcome_tables_and_the_kill_matrix(self, pristine: Path, mutant: Path) -> None:
        """Rows with grade, reason and count; the matrix with variants down and race scenarios across."""
        text = (mutant / "report.md").read_text(encoding="utf-8")
        assert "### race_two_requests · probe · CheckOutsideLockSession: FAIL\n" in text
        forbidden = _json(mutant / MUTANT)["rows"][3]["schedules"]
        assert forbidden > 0
        assert (
            "| FORBIDDEN | two answers built on the same version were both committed: the history splices them "
            f"| {forbidden} |\n"
        ) in text
        text = (pristine / "report.md").read_text(encoding="utf-8")
        assert "| variant | race_two_requests |\n| --- | --- |\n| VersionedSession (correct) | survived |\n" in text
        cells = [c for c in _json(pristine / MATRIX)["cells"] if c["variant"] == "CheckOutsideLockSession"]
        assert [c["status"] for c in cells] == ["killed", "killed"]
        shortest = min((c["schedule"] for c in cells), key=lambda schedule: (len(schedule), schedule))
        assert f"| CheckOutsideLockSession | killed (probe, line): `{shortest}` |\n" in text

    def test_a_counterexample_explains_itself_in_the_record_and_the_report(self, mutant: Path) -> None:
        """The record keeps the racing accesses and the swapped run; report.md words them and replays that run."""
        record = _json(mutant / MUTANT)
        explanation = record["counterexample"]["explanation"]
        accesses = [explanation["swap"][side]["accesses"] for side in ("first", "second")]
        assert [[(a["access"], a["file"]) for a in side] for side in accesses] == [
            [("read self.session._version", "lab/sessions/versioned.py")],
            [("write self.session._version", "lab/sessions/versioned.py")],
        ]
        assert explanation["swapped"]["grade"] == "ACCEPTABLE"
        text = (mutant / "report.md").read_text(encoding="utf-8")
        assert "Why it fails:\n\n- " + explanation["text"][0] + "\n  - " + explanation["text"][1].strip() + "\n" in text
        assert (
            f"The allowed run, swapped: `python -m lab replay race_two_requests:"
            f"{explanation['swapped']['schedule']} --variant CheckOutsideLockSession`"
        ) in text


@pytest.mark.timeout(60)
class TestRepeatability:
    @pytest.mark.slow
    def test_exploring_and_writing_again_gives_the_same_records(self, pristine: Path, tmp_path: Path) -> None:
        """Apart from timing, every exploration record, the matrix and the summary are the same bytes."""
        report = _write(tmp_path / "again", _explore())
        assert report.ok, report.problems
        for rel in (RACE, RACE_LINE, LATCHED, LATCHED_LINE):
            assert _without_timing((pristine / rel).read_bytes()) == _without_timing(
                (tmp_path / "again" / rel).read_bytes()
            )
        assert (pristine / MATRIX).read_bytes() == (tmp_path / "again" / MATRIX).read_bytes()
        assert _json(pristine / "run.json")["exploration"] == _json(tmp_path / "again" / "run.json")["exploration"]


@pytest.mark.timeout(30)
class TestStatus:
    def test_only_default_variants_and_the_matrix_count(self) -> None:
        """A mutant's FAIL informs; a default variant's FAIL or INCOMPLETE, or matrix problems, fail the run."""

        def summary(default: bool, verdict: str, ok: bool = True) -> dict[str, Any]:
            entry = {"default_variant": default, "verdict": verdict}
            return {"explorations": [entry], "kill_matrix": {"ok": ok, "problems": []}}

        assert not summary_fails(summary(False, "FAIL"))
        assert summary_fails(summary(True, "FAIL")) and summary_fails(summary(True, "INCOMPLETE"))
        assert summary_fails(summary(True, "PASS", ok=False))
        assert not summary_fails({"explorations": [], "kill_matrix": None})

    def test_a_preemption_bound_that_cuts_the_search_fails_the_run(self, explored: Explored) -> None:
        """INCOMPLETE is never a pass."""
        found = explore_scenario(_load("race_two_requests"), preemption_bound=0)
        assert found.verdict is ExploreVerdict.INCOMPLETE
        files = plan_exploration(explored.results, [found], None, {**SETTINGS, "preemption_bound": 0})
        assert files.summary is not None and summary_fails(files.summary)

    def test_the_writer_refuses_what_it_cannot_record(self, explored: Explored, tmp_path: Path) -> None:
        """An exploration without its normal run, or twice the same one: UsageError before any file is written."""
        folder = create_evidence_folder(tmp_path / "ev")
        now = datetime.now(UTC)
        only_latched = [r for r in explored.results if r.name == "out_of_order_commit"]
        with pytest.raises(UsageError, match="explore only scenarios that also ran normally"):
            write_evidence(
                folder,
                only_latched,
                [],
                root=FROZEN,
                command=["t"],
                started=now,
                ended=now,
                explorations=explored.explorations,
            )
        with pytest.raises(UsageError, match="was explored twice"):
            write_evidence(
                folder,
                explored.results,
                [],
                root=FROZEN,
                command=["t"],
                started=now,
                ended=now,
                explorations=[explored.explorations[0]] * 2,
            )
        assert [p.name for p in folder.iterdir()] == ["started.json"]  # written as the folder was made

    def test_reexploration_widens_the_timeout_within_a_bound(self) -> None:
        """Three times each recorded exploration's time, plus a second; capped however large the record says."""
        slow = ExpectedExploration(RACE, {"timing": {"seconds": 2.0}})
        huge = ExpectedExploration(RACE, {"timing": {"seconds": 1e9}})
        assert default_timeout([], [slow]) == BASE_TIMEOUT_SECONDS + 7.0
        assert default_timeout([], [huge]) == BASE_TIMEOUT_SECONDS + 600.0


@pytest.mark.timeout(60)
class TestCoveredTracks:
    @pytest.mark.slow
    def test_an_edited_exploration_count(self, ev: Path) -> None:
        """Its rows, outcomes and run.json disagree with it, and re-exploration counts again."""
        real = _json(ev / RACE)["schedules"]
        _edit(ev, RACE, lambda record: record.update(schedules=record["schedules"] + 1))
        report = audit(ev)
        assert _reasons(report, RACE) == [
            f"its rows add up to {real} schedules, but it says {real + 1}",
            f"its outcomes add up to {real} schedules, but it says {real + 1}",
            f"executions run is {real}, but it ran {real + 1} schedules and pruned 0",
            f"re-exploration gave schedules {real}; recorded {real + 1}",
        ]
        assert _reasons(report, "run.json") == [
            f"exploration {RACE}: schedules is {real}, but the file says {real + 1}"
        ]
        assert report.rerun.status == "DIFFERED"

    @pytest.mark.slow
    def test_an_edited_kill_matrix_cell(self, ev: Path) -> None:
        """A correct variant marked killed: its own problems no longer follow, and the rebuilt cell says survived."""

        def kill_the_correct_variant(record: dict[str, Any]) -> None:
            record["cells"][0].update(status="killed", schedule="0:01", why="FORBIDDEN: made up")

        cells = _json(ev / MATRIX)["cells"][0]["schedules"]
        _edit(ev, MATRIX, kill_the_correct_variant)
        report = audit(ev)
        reasons = _reasons(report, MATRIX)
        assert reasons[0] == (
            "records 0 problems and ok true, but its cells make 1 problems; first: correct variant "
            "VersionedSession was killed by race_two_requests (probe): FORBIDDEN: made up"
        )
        assert reasons[1].startswith("the cell VersionedSession x race_two_requests (probe) says killed in ")
        assert reasons[1].endswith(f"but {RACE} says survived in {cells} schedules")
        assert reasons[2:] == [
            f"re-execution gave the cell VersionedSession x race_two_requests (probe) survived in {cells} "
            f"schedules; recorded killed in {cells} schedules, schedule 0:01",
        ]
        assert report.rerun.status == "DIFFERED"

    def test_a_status_that_ignores_the_explorations(self, ev: Path) -> None:
        """run.json's status is recomputed from the results, the explorations and the matrix."""
        _edit(ev, "run.json", lambda record: record.update(status="FAIL"))
        report = audit(ev, rerun=False)
        assert _reasons(report, "run.json") == [
            "status is FAIL, but the results, broken files and exploration make it PASS"
        ]

    @pytest.mark.slow
    def test_counts_moved_between_rows_only_reexploration_sees(self, ev: Path) -> None:
        """The sums still agree, so the cross-checks pass; the report rendered again and the re-exploration do not."""

        def move_one(record: dict[str, Any]) -> None:
            record["rows"][0]["schedules"] -= 1
            record["rows"][1]["schedules"] += 1

        real = _json(ev / RACE)["rows"][0]["schedules"]
        _edit(ev, RACE, move_one)
        stale = [f"{name}: differs from the report the audit's code makes of these records" for name in REPORTS]
        assert [str(p).split(" (first")[0] for p in audit(ev, rerun=False).problems] == stale
        report = audit(ev)
        assert [str(p).split(" (first")[0] for p in report.problems] == [
            *stale,
            f"{RACE}: re-exploration gave row 1 (ACCEPTABLE: both began on one version; slow committed first, fast is "
            f"STALE) in {real} schedules; recorded {real - 1}",
        ]

    def test_no_rerun_says_what_it_skipped(self, mev: Path) -> None:
        """Without re-execution the cross-checks still run, and the note names the explorations."""
        _edit(mev, MUTANT, lambda record: record.update(verdict="PASS"))
        report = audit(mev, rerun=False)
        assert report.rerun.status == "SKIPPED"
        assert report.rerun.note == (
            "re-execution skipped (--no-rerun): neither the scenarios nor the explorations were run again"
        )
        assert _reasons(report, MUTANT) == [
            "verdict is PASS, but its rows, outcomes, bounds and problem make it FAIL",
            "verdict is PASS, but it has a counterexample",
        ]
        assert _reasons(report, "run.json") == [f"exploration {MUTANT}: verdict is FAIL, but the file says PASS"]

    def test_an_explanation_must_say_what_its_fields_say(self, mev: Path) -> None:
        """Reworded, or claiming an outcome no allowed row matches, it is named; a record from before explanations
        (none at all) is still good evidence."""

        def reword(record: dict[str, Any]) -> None:
            explanation = record["counterexample"]["explanation"]
            explanation["text"][1] = explanation["text"][1].replace("read", "write")
            explanation["swapped"]["observed"]["slow"] = "COMMITTED"

        _edit(mev, MUTANT, reword)
        assert _reasons(audit(mev, rerun=False), MUTANT) == [
            "its counterexample's explanation text does not say what its fields say",
            "its counterexample's explanation says the swapped run is ACCEPTABLE, but no allowed row of its table "
            "with that reason matches what that run reached",
        ]
        _edit(mev, MUTANT, lambda record: record["counterexample"].pop("explanation"))
        # only the reports, rendered from the record as it was, still show the explanation
        assert [p.file for p in audit(mev, rerun=False).problems] == list(REPORTS)

    def test_missing_extra_and_malformed_records_are_each_named(self, ev: Path) -> None:
        """Every problem at once, one line each, and an unusable record is not re-explored."""
        (ev / RACE_LINE).unlink()
        shutil.copyfile(ev / LATCHED, ev / "explore/out_of_order_commit/instruction.json")
        (ev / RACE).write_text('{"name": "race_two_requests",', encoding="utf-8")
        reseal(ev)
        report = audit(ev, rerun=False)
        command = f"its command (run.py {' '.join(WORDS)} --out {_json(ev / 'run.json')['command'][-1]})"
        assert _reasons(report, RACE_LINE) == [
            "missing: run.json lists this exploration",
            f"missing: {command} explores race_two_requests at line over VersionedSession",
        ]
        assert _reasons(report, "explore/out_of_order_commit/instruction.json") == [
            "records out_of_order_commit at probe over no variant, but its path says out_of_order_commit at "
            "instruction over no variant",
            "is not listed in run.json's exploration summary",
            f"is an exploration {command} does not make",
        ]
        assert _reasons(report, RACE) == ["is truncated: the JSON ends early at line 1"]
        assert all("\n" not in str(problem) for problem in report.problems)


@pytest.mark.timeout(60)
class TestWithoutExploration:
    @pytest.mark.slow
    def test_a_folder_without_exploration_is_what_it_was(self, explored: Explored, tmp_path: Path) -> None:
        """No explore/, no summary in run.json, the same audit note as before exploration existed."""
        now = datetime.now(UTC)
        folder = create_evidence_folder(tmp_path / "plain")
        command = [
            "run.py",
            "--scenario",
            "race_two_requests",
            "--scenario",
            "out_of_order_commit",
            "--out",
            str(folder),
        ]
        written = write_evidence(folder, explored.results, [], root=FROZEN, command=command, started=now, ended=now)
        assert written.ok, written.problems
        assert not (folder / "explore").exists()
        record = _json(folder / "run.json")
        assert "exploration" not in record and record["status"] == "PASS"
        assert "## Exploration" not in (folder / "report.md").read_text(encoding="utf-8")
        report = audit(folder)
        assert report.ok, report.problems
        assert report.rerun.note == (
            "2 scenarios re-executed with the auditing checkout's code (identical to sources/): byte-identical "
            "traces, same outcomes and verdicts"
        )
        assert audit(folder, rerun=False).rerun.note == "re-execution skipped (--no-rerun)"

    @pytest.mark.slow
    def test_exploring_without_a_matrix_can_pass(self, explored: Explored, tmp_path: Path) -> None:
        """Every default variant PASS and no kill matrix: the run's status is PASS."""
        only = Explored(explored.results[1:], explored.explorations[2:], None)
        report = _write(
            tmp_path / "ev", only, ["--explore", "--granularity", "both", "--scenario", "out_of_order_commit"]
        )
        assert report.ok, report.problems
        record = _json(tmp_path / "ev" / "run.json")
        assert record["status"] == "PASS" and record["exploration"]["kill_matrix"] is None
        assert not (tmp_path / "ev" / MATRIX).exists()


@pytest.mark.timeout(60)
class TestFormat:
    """A folder written by the current code holds only the layout's paths and exactly the schema's fields."""

    def test_every_path_is_one_the_layout_names(self, pristine: Path) -> None:
        names = [p.relative_to(pristine).as_posix() for p in sorted(pristine.rglob("*")) if p.is_file()]
        unnamed = [
            name
            for name in names
            if name not in (*layout.TOP_FILES, *layout.OPTIONAL_FILES, layout.KILL_MATRIX)
            and not name.startswith(layout.SOURCES)
            and layout.parse_scenario_path(name) is None
            and parse_exploration_path(name) is None
        ]
        assert unnamed == []
        run = _json(pristine / layout.RUN)
        for name in run["scenarios"]:
            assert {layout.result_path(name), layout.trace_path(name)} <= set(names)
        listed = sorted(entry["file"] for entry in run["exploration"]["explorations"])
        assert listed == [name for name in names if parse_exploration_path(name) is not None]

    def test_every_record_holds_exactly_the_documented_fields(self, pristine: Path) -> None:
        run = _json(pristine / layout.RUN)
        records: list[tuple[str, Any]] = [
            (name, _json(pristine / name)) for name in (layout.STARTED, layout.RUN, layout.SOURCES_JSON, layout.AUDIT)
        ]
        records.append(("exploration summary", run["exploration"]))
        records.append((layout.KILL_MATRIX, _json(pristine / layout.KILL_MATRIX)))
        for name in run["scenarios"]:
            result = _json(pristine / layout.result_path(name))
            records.append((layout.RESULT, result))
            records.extend(("check", check) for check in result["checks"])
        records.extend(("exploration", _json(pristine / entry["file"])) for entry in run["exploration"]["explorations"])
        assert [reason for name, record in records for reason in field_report(record, name)] == []
