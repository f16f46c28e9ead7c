"""The cross-process lessons: explored at probe and line granularity, the PostgreSQL one on a real server, the
database accesses the explorer is told about, and the console keeping a conversation across restarts."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from lab.console import main
from lab.scenarios.exploring import ExploreVerdict, explore_scenario
from lab.scenarios.loader import LoadedScenario, load
from lab.scenarios.runner import Verdict, run_scenario
from lab.sessions.stores import POSTGRES_URL_VARIABLE

SCENARIOS = Path(__file__).resolve().parent.parent / "scenarios"


def _load(name: str) -> LoadedScenario:
    item = load(SCENARIOS / f"{name}.py")
    assert isinstance(item, LoadedScenario), str(item)
    return item


def _reached(found: object) -> list[dict[str, object]]:
    return [row.expect for row in found.rows if row.schedules]  # type: ignore[attr-defined]


@pytest.mark.timeout(60)
@pytest.mark.parametrize("granularity", ["probe", "line"])
class TestAcrossProcesses:
    def test_compare_and_set_passes_every_interleaving(self, granularity: str) -> None:
        """Two workers on one SQLite row: one COMMITTED and one STALE in every schedule, each winner reached."""
        found = explore_scenario(_load("cas_commit_two_workers"), granularity=granularity)
        assert found.verdict is ExploreVerdict.PASS, found.problem
        assert [(row.grade, row.schedules > 0) for row in found.rows] == [
            ("ACCEPTABLE", True),
            ("ACCEPTABLE", True),
            ("FORBIDDEN", False),
        ]

    def test_the_explorer_finds_the_lost_update(self, granularity: str) -> None:
        """Without compare-and-set, the explorer finds two COMMITTED on one version, one answer lost; the mutant's
        lesson shows that lost update in every schedule its latches allow."""
        killed = explore_scenario(
            _load("cas_commit_two_workers"), granularity=granularity, variant="InProcessLockSession"
        )
        assert killed.verdict is ExploreVerdict.FAIL
        assert killed.counterexample is not None and killed.counterexample.replayed
        observed = killed.counterexample.observed
        assert (observed["worker_a"], observed["worker_b"], observed["version"], observed["answers_kept"]) == (
            "COMMITTED",
            "COMMITTED",
            1,
            1,
        )
        lesson = explore_scenario(_load("two_workers_in_process_lock"), granularity=granularity)
        assert lesson.verdict is ExploreVerdict.PASS, lesson.problem
        assert lesson.schedules > 1 and lesson.distinct == 1
        assert {key: lesson.rows[0].expect[key] for key in ("worker_a", "worker_b", "version", "answers_kept")} == {
            "worker_a": "COMMITTED",
            "worker_b": "COMMITTED",
            "version": 1,
            "answers_kept": 1,
        }


class TestDatabaseAccessesAreSeen:
    @pytest.mark.timeout(20)
    def test_both_workers_row_accesses_are_recorded(self) -> None:
        """Each store operation is an access of the row (reads and writes) that the explorer sees for each actor,
        although each worker has its own connection object."""
        result = run_scenario(_load("cas_commit_two_workers"), record_accesses=True)
        assert result.run is not None
        row = {
            (a.actor, a.entry[2]) for a in result.run.accesses if a.entry[:2] == ("obj:db sqlite:chat.db", "session:s1")
        }
        winner = next(who for who, status in result.outcomes.items() if status == "COMMITTED")
        assert {("worker_a", "r"), ("worker_b", "r"), (winner, "w")} <= row


class TestRowLockWait:
    @pytest.mark.slow
    @pytest.mark.timeout(60)
    def test_on_postgres_the_waiter_waits_for_the_holder(
        self, postgres_url: str, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """On a real server: the server refuses the waiter's row lock, the trace names who holds the row, the
        waiter ends STALE; explored at probe and line granularity, with and without the wait, it passes."""
        monkeypatch.setenv(POSTGRES_URL_VARIABLE, postgres_url)
        item = _load("row_lock_wait")
        result = run_scenario(item)
        assert result.verdict is Verdict.PASS, [c for c in result.checks if not c.passed]
        assert result.outcomes == {"holder": "COMMITTED", "waiter": "STALE"}
        assert result.state["server_refused_waiter"] is True
        lines = [f"{event.actor} {event.describe()}" for event in result.trace]
        assert "waiter lock.wait row s1 (holder=holder)" in lines
        assert lines.index("holder lock.release row s1") < lines.index("waiter lock.acquire row s1")
        for granularity in ("probe", "line"):
            found = explore_scenario(item, granularity=granularity)
            assert found.verdict is ExploreVerdict.PASS, found.problem
            assert [row["server_refused_waiter"] for row in _reached(found)] == [True, False]

    @pytest.mark.timeout(20)
    def test_without_a_server_it_is_skipped_and_says_why(self, monkeypatch: pytest.MonkeyPatch) -> None:
        """No server configured: the verdict is SKIPPED, with the reason, nothing ran and nothing was checked:
        neither a failure nor a pass."""
        monkeypatch.delenv(POSTGRES_URL_VARIABLE, raising=False)
        result = run_scenario(_load("row_lock_wait"))
        assert (result.verdict, result.run_status, result.checks, result.trace) == (Verdict.SKIPPED, "NOT_RUN", (), ())
        assert result.problem.startswith(f"no PostgreSQL server: set {POSTGRES_URL_VARIABLE}")

    @pytest.mark.timeout(20)
    def test_each_result_says_which_store_it_used(self) -> None:
        """The durable lessons name their store; a lesson whose sessions live in memory says memory."""
        assert run_scenario(_load("cas_commit_two_workers")).store == "sqlite:chat.db"
        assert run_scenario(_load("restart_forgets_receipts")).store == "memory"


def _chat(args: list[str], lines: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main(["chat", *args], stdin=io.StringIO(lines), stdout=out, stderr=err, environ={})
    return code, out.getvalue(), err.getvalue()


class TestConsoleStore:
    def test_sqlite_keeps_the_conversation_across_restarts(self, tmp_path: Path) -> None:
        """A second console on the same file starts where the first stopped, and says which store it uses."""
        store = f"sqlite:{tmp_path / 'chat.db'}"
        code, out, _ = _chat(["--store", store], "first\nsecond\n")
        assert code == 0 and out.splitlines()[0].count(f"versioned session in {store} (version 0, 0 pairs kept)")
        code, out, err = _chat(["--store", store], "third\n")
        assert code == 0 and err == ""
        start, answers = out.split("\n\n", 1)  # the start lines end at a blank line
        assert f"in {store} (version 2, 2 pairs kept)" in start.splitlines()[0]
        assert "kept there across restarts" in start
        assert answers.splitlines() == ["(offline) you asked: third"]

    def test_postgres_store(self, postgres_url: str) -> None:
        """The same on PostgreSQL; the banner shows the URL."""
        code, out, _ = _chat(["--store", postgres_url], "hello\n")
        assert code == 0 and f"versioned session in {postgres_url}" in out.splitlines()[0]

    @pytest.mark.parametrize(
        ("args", "message"),
        [
            (["--store", "sqlite:/nonexistent-folder/chat.db"], "cannot use /nonexistent-folder/chat.db"),
            (["--store", "redis://x"], "unknown store 'redis://x'"),
            (["--store", "sqlite:x.db", "--session", "transactional"], "--store keeps a versioned session"),
        ],
    )
    def test_store_mistakes_are_one_line(self, args: list[str], message: str) -> None:
        """A store the console cannot use is one line and exit code 2."""
        code, out, err = _chat(args, "")
        assert code == 2 and out == ""
        assert err.startswith("error: ") and message in err and err.count("\n") == 1
