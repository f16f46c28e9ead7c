"""Completeness is re-derived, not trusted: a forger who drops, strips or relabels explorations, kill-matrix cells or
scenarios, and adjusts every total, sum and report consistently, is caught by a default audit.

Each forgery starts from an honest folder written by the current code from a small checkout (two race scenarios of
two variants each, and one latched scenario, so the kill matrix is whole and small), then covers its tracks the way
a forger would (:mod:`tests.forging`): the records rewritten consistently, the reports rendered again, the sums
recomputed. Before the auditor derived what the command had to make, every one of these audited OK.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from lab.campaign import Campaign, ExploreSettings
from lab.commandline import parse_recorded
from lab.errors import UsageError
from lab.evidence import AuditReport, audit
from lab.evidence.records.plan import ScenarioFacts, expected_contents
from tests.evidence_checkout import FROZEN
from tests.forging import rerender, reseal, rewrite

RACE = """\
\"\"\"Race: one reply delivered twice; the second delivery must be a DUPLICATE, never STALE.\"\"\"

from lab import VERSIONED_VARIANTS, CommitStatus, Scenario, acceptable, actor, forbidden

class Dup(Scenario):
    source = "a test"
    variants = {name: VERSIONED_VARIANTS[name] for name in ("VersionedSession", "ReceiptsAfterVersionSession")}
    outcomes = (
        acceptable("first committed, retry is the duplicate", first="COMMITTED", retry="DUPLICATE", version=1),
        acceptable("retry committed first", first="DUPLICATE", retry="COMMITTED", version=1),
        forbidden("a delivery of a committed request was called STALE", first="STALE"),
        forbidden("a delivery of a committed request was called STALE", retry="STALE"),
    )

    def setup(self) -> None:
        self.session = self.lab.wire(self.variant, "s1")
        self.ticket = self.session.begin("r1", "question")

    @actor
    def first(self) -> CommitStatus:
        return self.session.commit(self.ticket, "answer", "stop")

    @actor
    def retry(self) -> CommitStatus:
        return self.session.commit(self.ticket, "answer", "stop")

    def observe(self) -> dict[str, object]:
        return {"version": self.session.version}
"""
MUTANT = "ReceiptsAfterVersionSession"
SUMMARY = "run.json"
MATRIX = "explore/kill-matrix.json"
LATCHED = "explore/latched/probe.json"
FAILING = f"explore/dup/probe.{MUTANT}.json"


def _checkout(root: Path, scenarios: dict[str, str]) -> Path:
    shutil.copytree(FROZEN / "lab", root / "lab")
    for name in ("run.py", "audit.py", "pyproject.toml"):
        shutil.copy2(FROZEN / name, root / name)
    (root / "scenarios").mkdir()
    for name, text in scenarios.items():
        (root / "scenarios" / f"{name}.py").write_text(text, encoding="utf-8")
    return root


@pytest.fixture(scope="module")
def checkout(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Two race scenarios of two variants each, and a latched scenario."""
    latched = (FROZEN / "scenarios" / "out_of_order_commit.py").read_text(encoding="utf-8")
    dup_too = RACE.replace("class Dup", "class DupToo")
    return _checkout(tmp_path_factory.mktemp("checkout"), {"dup": RACE, "dup_too": dup_too, "latched": latched})


@pytest.fixture(scope="module")
def unlocked_checkout(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One race scenario whose only (so default) variant is the unlocked session: its normal run passes, its
    exploration is INCOMPLETE, so the run fails only through its exploration."""
    only = RACE.replace('("VersionedSession", "ReceiptsAfterVersionSession")', '("UnlockedSession",)')
    return _checkout(tmp_path_factory.mktemp("unlocked"), {"unlocked": only})


def _run(checkout: Path, out: Path, words: list[str], settings: ExploreSettings, names: tuple[str, ...] = ()) -> Path:
    outcome = Campaign(checkout / "scenarios", root=checkout).run(
        out, names=names, command=["run.py", *words, "--out", str(out)], explore=settings
    )
    assert outcome.audit is not None and outcome.audit.ok, outcome.audit.problems if outcome.audit else None
    return out


@pytest.fixture(scope="module")
def whole(checkout: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Every scenario explored at probe granularity, and the whole kill matrix (partial false)."""
    out = tmp_path_factory.mktemp("whole") / "ev"
    return _run(checkout, out, ["--explore", "--granularity", "probe"], ExploreSettings(("probe",)))


@pytest.fixture(scope="module")
def failing(checkout: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One scenario explored over its mutant: the exploration FAILs (a mutant's only informs: the run passes)."""
    out = tmp_path_factory.mktemp("failing") / "ev"
    words = ["--explore", "--scenario", "dup", "--variant", MUTANT]
    return _run(checkout, out, words, ExploreSettings(("probe",), variant=MUTANT), names=("dup",))


@pytest.fixture(scope="module")
def fails_through_exploration(unlocked_checkout: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Every result passes; the run fails only through its exploration."""
    out = tmp_path_factory.mktemp("unlocked") / "ev"
    folder = _run(unlocked_checkout, out, ["--explore", "--granularity", "probe"], ExploreSettings(("probe",)))
    run = _json(folder, SUMMARY)
    assert run["status"] == "FAIL" and run["verdicts"]["PASS"] == 1, run
    return folder


def _json(folder: Path, rel: str) -> Any:
    return json.loads((folder / rel).read_text(encoding="utf-8"))


def _forge(source: Path, tmp_path: Path, edit: Callable[[Path], None]) -> Path:
    folder = tmp_path / "forged"
    shutil.copytree(source, folder)
    edit(folder)
    rerender(folder)
    reseal(folder)
    return folder


def _unlink(folder: Path, rel: str) -> None:
    """Delete a file and the folders it leaves empty (the auditor names an empty folder)."""
    path = folder / rel
    path.unlink()
    while path.parent != folder and not any(path.parent.iterdir()):
        path = path.parent
        path.rmdir()


def _drop_exploration(folder: Path, rel: str) -> None:
    """Delete one exploration and every trace of it in run.json: its entry, its verdict count."""
    _unlink(folder, rel)
    run = _json(folder, SUMMARY)
    summary = run["exploration"]
    summary["explorations"] = [entry for entry in summary["explorations"] if entry["file"] != rel]
    verdicts = [entry["verdict"] for entry in summary["explorations"]]
    summary["verdicts"] = {word: verdicts.count(word) for word in summary["verdicts"]}
    rewrite(folder, SUMMARY, run)


def _rewrite_matrix(folder: Path, matrix: dict[str, Any]) -> None:
    """Write an edited kill matrix with the problems its cells now make (the lab's own rule, which a forger has),
    and repeat them in run.json's summary."""
    from lab.evidence.records.exploration import matrix_from_record

    matrix["problems"] = matrix_from_record(matrix).problems()
    matrix["ok"] = not matrix["problems"]
    rewrite(folder, MATRIX, matrix)
    run = _json(folder, SUMMARY)
    run["exploration"]["kill_matrix"].update(ok=matrix["ok"], problems=matrix["problems"])
    rewrite(folder, SUMMARY, run)


def _reasons(report: AuditReport, file: str) -> list[str]:
    return [problem.reason for problem in report.problems if problem.file == file]


def _caught(report: AuditReport, file: str, words: str) -> None:
    assert not report.ok
    assert any(words in reason for reason in _reasons(report, file)), report.problems


@pytest.mark.slow
@pytest.mark.timeout(300)
class TestForgeriesAreCaughtByADefaultAudit:
    def test_the_honest_folders_audit_ok(
        self, whole: Path, failing: Path, fails_through_exploration: Path, checkout: Path, unlocked_checkout: Path
    ) -> None:
        for folder, root in ((whole, checkout), (failing, checkout), (fails_through_exploration, unlocked_checkout)):
            report = audit(folder, checkout=root)
            assert report.ok and report.rerun.status == "MATCHED", report.problems
        assert _json(whole, MATRIX).get("partial", False) is False

    def test_a_failing_exploration_dropped(self, failing: Path, checkout: Path, tmp_path: Path) -> None:
        folder = _forge(failing, tmp_path, lambda f: _drop_exploration(f, FAILING))
        _caught(audit(folder, checkout=checkout), FAILING, "missing: its command")

    def test_any_exploration_dropped(self, whole: Path, checkout: Path, tmp_path: Path) -> None:
        folder = _forge(whole, tmp_path, lambda f: _drop_exploration(f, LATCHED))
        _caught(audit(folder, checkout=checkout), LATCHED, "missing: its command")

    def test_the_kill_matrix_dropped(self, whole: Path, checkout: Path, tmp_path: Path) -> None:
        def drop(folder: Path) -> None:
            _unlink(folder, MATRIX)
            run = _json(folder, SUMMARY)
            run["exploration"]["kill_matrix"] = None
            rewrite(folder, SUMMARY, run)

        _caught(audit(_forge(whole, tmp_path, drop), checkout=checkout), MATRIX, "missing: its command")

    def test_partial_forged_into_the_kill_matrix(self, whole: Path, checkout: Path, tmp_path: Path) -> None:
        def partial(folder: Path) -> None:
            matrix = _json(folder, MATRIX)
            matrix["partial"] = True
            _rewrite_matrix(folder, matrix)

        _caught(audit(_forge(whole, tmp_path, partial), checkout=checkout), MATRIX, "partial is true")

    def test_a_race_scenarios_column_removed(self, whole: Path, checkout: Path, tmp_path: Path) -> None:
        def column(folder: Path) -> None:
            matrix = _json(folder, MATRIX)
            matrix["scenarios"] = [name for name in matrix["scenarios"] if name != "dup_too"]
            matrix["cells"] = [cell for cell in matrix["cells"] if cell["scenario"] != "dup_too"]
            _rewrite_matrix(folder, matrix)

        _caught(audit(_forge(whole, tmp_path, column), checkout=checkout), MATRIX, "its scenarios are")

    def test_a_mutant_row_removed(self, whole: Path, checkout: Path, tmp_path: Path) -> None:
        """Only the re-execution's workers know which variants a scenario declares: a default audit asks them.
        (Rebuilding the matrix caught this one before too: the rebuilt one has the row.)"""

        def row(folder: Path) -> None:
            matrix = _json(folder, MATRIX)
            matrix["variants"] = [name for name in matrix["variants"] if name != MUTANT]
            matrix["cells"] = [cell for cell in matrix["cells"] if cell["variant"] != MUTANT]
            _rewrite_matrix(folder, matrix)

        _caught(audit(_forge(whole, tmp_path, row), checkout=checkout), MATRIX, f"missing the cell {MUTANT}")

    def test_explore_removed_from_the_command(self, whole: Path, checkout: Path, tmp_path: Path) -> None:
        def plain(folder: Path) -> None:
            run = _json(folder, SUMMARY)
            run["command"] = ["run.py", "--out", run["command"][-1]]
            rewrite(folder, SUMMARY, run)

        _caught(audit(_forge(whole, tmp_path, plain), checkout=checkout), SUMMARY, "does not explore")

    def test_the_whole_exploration_stripped(
        self, fails_through_exploration: Path, unlocked_checkout: Path, tmp_path: Path
    ) -> None:
        def strip(folder: Path) -> None:
            shutil.rmtree(folder / "explore")
            run = _json(folder, SUMMARY)
            del run["exploration"]
            run["status"] = "PASS"
            rewrite(folder, SUMMARY, run)

        forged = _forge(fails_through_exploration, tmp_path, strip)
        _caught(audit(forged, checkout=unlocked_checkout), SUMMARY, "has no exploration summary")


@pytest.mark.slow
@pytest.mark.timeout(120)
@pytest.mark.parametrize(
    "command",
    [[], ["lab", "list"], ["run.py", "--replay", "dup:0:01"], ["python", "other.py"], ["lab", "run"]],
    ids=["empty", "list", "replay", "another-program", "refused"],
)
def test_a_command_that_is_not_a_run_is_a_problem(command: object, whole: Path, checkout: Path, tmp_path: Path) -> None:
    """A scenario dropped from the folder under a command that runs nothing is still caught: the command is."""

    def relabel(folder: Path) -> None:
        run = _json(folder, SUMMARY)
        run["command"] = command
        rewrite(folder, SUMMARY, run)

    report = audit(_forge(whole, tmp_path, relabel), checkout=checkout, rerun=False)
    _caught(report, SUMMARY, "makes an evidence folder")


class TestTheGrammar:
    def test_reads_both_spellings_alike(self) -> None:
        old = parse_recorded(["run.py", "--explore", "--granularity", "both", "--scenario", "a", "--out", "x"])
        new = parse_recorded(["lab", "explore", "--granularity=both", "--scenario=a", "--out=x"])
        assert old == new and old.granularities == ("probe", "line") and old.selected == ("a",)

    @pytest.mark.parametrize(
        "command",
        [
            ["run.py", "--list"],
            ["lab", "replay", "a:0"],
            ["run.py", "--out", "x", "--max-schedules", "0", "--explore"],
            ["run.py", "--out", "x", "--watchdog", "nan"],
            ["lab", "run", "--out", "x", "--variant", "V"],
        ],
    )
    def test_refuses_what_the_command_line_refuses(self, command: list[str]) -> None:
        with pytest.raises(UsageError):
            parse_recorded(command)


class TestThePlan:
    def test_cells_partial_and_optional_explorations(self) -> None:
        facts = {
            "a": ScenarioFacts(("Good", "Bad"), False),
            "b": ScenarioFacts(("Good", "Worse"), False),
            "c": ScenarioFacts((), False),
            "pinned": ScenarioFacts(("Good",), True),
        }
        plan = expected_contents(
            selected=["a", "c", "pinned"],
            every=["a", "b", "c", "pinned"],
            facts=facts,
            granularities=("probe",),
            variant=None,
            not_run=frozenset({"c"}),
        )
        assert plan.explorations == ("explore/a/probe.Good.json", "explore/c/probe.json")
        assert plan.optional == {"explore/c/probe.json"}
        matrix = plan.kill_matrix
        assert matrix is not None and matrix.partial is True and matrix.scenarios == ("a",)
        assert matrix.cells == (
            ("Good", "a", "probe"),
            ("Good", "a", "line"),
            ("Bad", "a", "probe"),
            ("Bad", "a", "line"),
        )

    def test_a_variant_explores_only_its_declarers_and_builds_no_matrix(self) -> None:
        facts = {"a": ScenarioFacts(("Good", "Bad"), False), "c": ScenarioFacts((), False)}
        plan = expected_contents(
            selected=["a", "c"], every=["a", "c"], facts=facts, granularities=("probe", "line"), variant="Bad"
        )
        assert plan.explorations == ("explore/a/probe.Bad.json", "explore/a/line.Bad.json")
        assert plan.kill_matrix is None
