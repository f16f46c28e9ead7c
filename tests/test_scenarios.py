"""Every shipped scenario passes, and its trace is the same on every run and in every process."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from lab import actor
from lab.engine.core import trace_digest
from lab.scenarios.exploring import ExploreVerdict, explore_scenario
from lab.scenarios.loader import BrokenScenario, LoadedScenario, load, load_all
from lab.scenarios.runner import Verdict, run_scenario
from lab.scenarios.template import template_text

ROOT = Path(__file__).resolve().parent.parent
SCENARIOS = ROOT / "scenarios"
SHIPPED = [path.stem for path in sorted(SCENARIOS.glob("[!_]*.py"))]
REQUIRED = {
    "out_of_order_commit",
    "duplicate_commit",
    "id_conflict",
    "incomplete_output",
    "whole_round_trimming",
    "foreign_ticket",
    "snapshot_isolation",
    "swapped_latches",
    "failed_reply_first",
    "ticket_to_other_session",
    "receipt_eviction",
    "timeout_after_trim",
    "rejected_before_transport",
    "reply_table",
    "synchronized_blocks_fast",
    "versioned_lets_fast_through",
    "synchronized_fast_first_deadlocks",
    "mutant_check_outside_lock",
    "mutant_trim_by_message",
    "race_two_requests",
    "race_duplicate_delivery",
    "race_failed_reply",
    "race_chat_two_questions",
}


def _load(name: str) -> LoadedScenario:
    item = load(SCENARIOS / f"{name}.py")
    assert isinstance(item, LoadedScenario), str(item)
    return item


class TestShippedScenarios:
    def test_every_required_scenario_is_shipped(self) -> None:
        """The scenarios the issues ask for are all present, by name."""
        assert set(SHIPPED) >= REQUIRED

    @pytest.mark.timeout(120)
    @pytest.mark.parametrize("name", SHIPPED)
    def test_scenario_passes(self, name: str, lab_explores: bool) -> None:
        """The scenario's every check holds; with ``pytest --lab-explore``, under every interleaving that matters."""
        loaded = _load(name)
        result = run_scenario(loaded)
        if result.verdict is Verdict.SKIPPED:  # a PostgreSQL lesson without a server: it says why
            pytest.skip(result.problem)
        if lab_explores and not loaded.cls.mutant and loaded.cls.pin is None:
            for granularity in ("probe", "line"):
                found = explore_scenario(loaded, granularity=granularity, mode="find")  # stop at a failure
                assert found.verdict is ExploreVerdict.PASS, (granularity, found.problem, found.counterexample)
            return
        failed = [f"{c.name}: {c.reason}" for c in result.checks if not c.passed]
        assert result.verdict is Verdict.PASS, failed

    @pytest.mark.timeout(20)
    def test_mutants_demonstrate_a_broken_invariant(self) -> None:
        """A mutant scenario is marked as one and says 'the bug shows' in at least one passing check."""
        for name in SHIPPED:
            result = run_scenario(_load(name))
            if result.mutant:
                assert any("the bug shows" in c.name and c.passed for c in result.checks), name

    @pytest.mark.timeout(20)
    def test_deadlock_scenario_names_who_waits_for_what(self) -> None:
        """The deadlock lesson reports the latch slow waits for and the lock fast waits for, held by slow."""
        result = run_scenario(_load("synchronized_fast_first_deadlocks"), watchdog_seconds=60)
        assert result.run_status == "DEADLOCK"
        assert {b.actor: b.waits_for for b in result.blocked} == {
            "slow": "latch 'fast-committed' still needs 1 count_down",
            "fast": "lock 'chat.lock' held by slow",
        }

    @pytest.mark.timeout(20)
    def test_out_of_order_commit_whole_trace(self) -> None:
        """The lesson's trace, pinned in full: fast commits while slow waits, then slow is STALE."""
        lines = [f"{e.actor} {e.describe()}" for e in run_scenario(_load("out_of_order_commit")).trace]
        assert lines == [
            "slow start",
            "slow probe s1 (point=begin:enter)",
            "slow lock.acquire s1.lock",
            "slow lock.release s1.lock",
            "slow note (text=begin -> ticket v0)",
            "slow latch.count_down slow-began (remaining=0)",
            "slow latch.wait fast-committed (blocked=True, remaining=1)",
            "fast start",
            "fast latch.wait slow-began (remaining=0)",
            "fast probe s1 (point=begin:enter)",
            "fast lock.acquire s1.lock",
            "fast lock.release s1.lock",
            "fast note (text=begin -> ticket v0)",
            "fast probe s1 (point=commit:enter)",
            "fast lock.acquire s1.lock",
            "fast probe s1 (point=commit:checked)",
            "fast probe s1 (point=commit:write)",
            "fast lock.release s1.lock",
            "fast latch.count_down fast-committed (remaining=0)",
            "fast end -> COMMITTED",
            "slow latch.open fast-committed",
            "slow probe s1 (point=commit:enter)",
            "slow lock.acquire s1.lock",
            "slow lock.release s1.lock",
            "slow end -> STALE",
            "lab final (history=['fast question', 'new answer'], version=1)",
        ]


def _digests() -> dict[str, str]:
    return {
        item.name: trace_digest(run_scenario(item).trace)
        for item in load_all(SCENARIOS)
        if isinstance(item, LoadedScenario)
    }


class TestDeterminism:
    @pytest.mark.slow
    @pytest.mark.timeout(60)
    def test_a_hundred_runs_one_digest(self) -> None:
        """Each scenario, run 100 times in one process, produces one trace digest."""
        items = [item for item in load_all(SCENARIOS) if isinstance(item, LoadedScenario)]
        for item in items:
            digests = {trace_digest(run_scenario(item).trace) for _ in range(100)}
            assert len(digests) == 1, item.name

    @pytest.mark.slow
    @pytest.mark.timeout(60)
    def test_same_digests_across_processes_and_hash_seeds(self) -> None:
        """Two processes with different PYTHONHASHSEED values produce the same digests as this one."""
        code = (
            "import json, sys; sys.path.insert(0, sys.argv[1]);"
            "from tests.test_scenarios import _digests; print(json.dumps(_digests()))"
        )
        here = _digests()
        for seed in ("1", "4242"):
            env = {**os.environ, "PYTHONHASHSEED": seed}
            out = subprocess.run(
                [sys.executable, "-c", code, str(ROOT)],
                env=env,
                capture_output=True,
                text=True,
                check=True,
                cwd=ROOT,
                timeout=50,
            )
            assert json.loads(out.stdout) == here


class TestBrokenScenarios:
    def test_broken_files_are_one_line_each_and_others_still_load(self, tmp_path: Path) -> None:
        """Syntax errors and missing parts are reported in one line; a good file beside them still loads."""
        (tmp_path / "good.py").write_text((SCENARIOS / "out_of_order_commit.py").read_text(encoding="utf-8"))
        (tmp_path / "syntax.py").write_text('"""x"""\ndef (:\n')
        (tmp_path / "no_class.py").write_text('"""x"""\nimport lab\n')
        (tmp_path / "no_doc.py").write_text(_file("    @actor\n    def a(self): pass\n", doc=""))
        (tmp_path / "no_actors.py").write_text(_file("    def a(self): pass\n"))
        (tmp_path / "stray.py").write_text(_file("    @actor\n    def a(self): pass\n") + "@actor\ndef b(self): pass\n")
        (tmp_path / "bad_blocked.py").write_text(
            _file("    outcomes = only(run='DEADLOCK', blocked_on={'b': 'x'})\n    @actor\n    def a(self): pass\n")
        )
        (tmp_path / "bad_table.py").write_text(_file("    outcomes = only()[0]\n    @actor\n    def a(self): pass\n"))
        items = {item.name: item for item in load_all(tmp_path)}
        assert isinstance(items["good"], LoadedScenario)
        problems = {name: str(item) for name, item in items.items() if isinstance(item, BrokenScenario)}
        assert problems == {
            "bad_blocked": "bad_blocked.py: blocked_on names 'b', which is not an actor (a)",
            "bad_table": "bad_table.py: outcomes is a table: only(...) for one outcome, or a tuple of "
            "acceptable/interesting/forbidden rows",
            "no_actors": "no_actors.py: A has no actors: decorate each method that runs as a thread with @actor",
            "no_class": "no_class.py: defines no Scenario subclass",
            "no_doc": "no_doc.py: has no module docstring: start the file with what the scenario teaches",
            "stray": "stray.py: @actor decorates b(), which is not a method of the Scenario class; indent it into "
            "the class",
            "syntax": "syntax.py: syntax error at line 2: invalid syntax",
        }
        assert all("\n" not in text for text in problems.values())

    @pytest.mark.parametrize(
        ("body", "problem"),
        [
            ("    actors = ('a',)\n", "A.actors is gone: decorate each actor method with @actor"),
            ("    expect = {'a': 'DONE'}\n", "A.expect is gone: write the one outcome in the table: outcomes = only("),
            ("    expect_state = {'n': 1}\n", "A.expect_state is gone: write the final state in the table"),
            ("    expect_run = 'DEADLOCK'\n", "A.expect_run is gone: write outcomes = only(run='DEADLOCK', ...)"),
            (
                "    expect_blocked = {}\n",
                "A.expect_blocked is gone: write outcomes = only(run='DEADLOCK', blocked_on=",
            ),
            ("    schedule = '0:01'\n", "A.schedule is gone: write pin = Pin(schedule=..., granularity=..."),
            ("    granularity = 'line'\n", "A.granularity is gone: write pin = Pin("),
            ("    variant_name = 'x'\n", "A.variant_name is gone: write pin = Pin("),
            (
                "    @actor\n    @staticmethod\n    def b(): pass\n",
                "@actor decorates a method (def name(self): ...), not",
            ),
            ("    @staticmethod\n    @actor\n    def b(): pass\n", "@actor A.b is not a plain method"),
            ("    @actor\n    def b(self, x): pass\n", "@actor A.b must take self and nothing else"),
            ("    @actor\n    def setup(self): pass\n", "@actor A.setup: an actor needs a public name of its own"),
            ("    outcomes = only(run='HUNG')\n", "only(run='HUNG'): a scenario's run ends FINISHED or DEADLOCK"),
            ("    outcomes = only(blocked_on={'a': 'x'})\n", "only(blocked_on=...) describes a deadlock"),
        ],
    )
    def test_the_older_api_and_a_misused_actor_are_one_line(self, tmp_path: Path, body: str, problem: str) -> None:
        """A retired attribute names its replacement; a misplaced @actor says what it needs; both in one line."""
        path = tmp_path / "old.py"
        path.write_text(_file(body + "    @actor\n    def a(self): pass\n"))
        item = load(path)
        assert isinstance(item, BrokenScenario)
        assert "\n" not in item.problem and item.problem.startswith(problem), item.problem

    def test_actors_are_numbered_in_the_order_they_are_defined(self, tmp_path: Path) -> None:
        """Actor 0 is the first @actor method; a subclass adds its own after the inherited ones."""
        path = tmp_path / "order.py"
        path.write_text(
            _file(
                "    @actor\n    def zeta(self): pass\n    def helper(self): pass\n"
                "    @actor\n    def alpha(self): pass\n"
            )
        )
        loaded = _load_from(path)
        assert loaded.cls.actors == ("zeta", "alpha")
        more = type("More", (loaded.cls,), {"beta": actor(lambda self: None)})
        assert more.actors == ("zeta", "alpha", "beta")
        mixin = type("Mixin", (), {"gamma": actor(lambda self: None)})
        assert type("Mixed", (mixin, loaded.cls), {}).actors == ("zeta", "alpha", "gamma")

    @pytest.mark.timeout(10)
    def test_hold_on_unknown_actor_is_an_error_not_a_crash(self, tmp_path: Path) -> None:
        """A hold naming an actor that does not exist gives ERROR with one clear line."""
        (tmp_path / "typo.py").write_text(
            _file(
                '    def setup(self):\n        self.lab.hold("slwo", at="p", until=self.lab.latch("l"))\n'
                "    @actor\n    def slow(self): pass\n"
            )
        )
        result = run_scenario(_load_from(tmp_path / "typo.py"))
        assert result.verdict is Verdict.ERROR
        assert result.problem == "setup() raised ScenarioError: hold() names actor 'slwo', which is not one of: slow"

    @pytest.mark.timeout(10)
    def test_latch_nobody_counts_down_fails_with_the_report(self, tmp_path: Path) -> None:
        """The common mistake, a latch nobody counts down, fails the scenario with the deadlock report."""
        (tmp_path / "forgot.py").write_text(
            _file(
                '    def setup(self):\n        self.done = self.lab.latch("done")\n'
                "    @actor\n    def a(self):\n        self.done.wait()\n"
            )
        )
        result = run_scenario(_load_from(tmp_path / "forgot.py"))
        assert result.verdict is Verdict.FAIL
        assert [c.reason for c in result.checks if not c.passed] == [
            "got DEADLOCK: deadlock: a waits for latch 'done' still needs 1 count_down"
        ]
        assert result.blocked[0].waits_for == "latch 'done' still needs 1 count_down"


class TestOutcomeTable:
    @pytest.mark.timeout(10)
    def test_a_one_row_table_is_graded_key_by_key(self) -> None:
        """only(...) gives one check per key, in the order run, actors, state, blocked: as the records keep them."""
        result = run_scenario(_load("synchronized_fast_first_deadlocks"))
        assert [(c.kind, c.name) for c in result.checks] == [
            ("run", "run ends DEADLOCK"),
            ("outcome", "slow -> BLOCKED"),
            ("outcome", "fast -> BLOCKED"),
            ("state", "state history == []"),
            ("state", "state transport_calls == 1"),
            ("blocked", "slow blocked on latch 'fast-committed' still needs 1 count_down"),
            ("blocked", "fast blocked on lock 'chat.lock' held by slow"),
        ]
        assert result.expect == {"slow": "BLOCKED", "fast": "BLOCKED"}

    @pytest.mark.timeout(10)
    def test_a_wrong_key_names_itself(self, tmp_path: Path) -> None:
        """A one-row table that does not hold fails on the very key that is wrong."""
        text = (SCENARIOS / "out_of_order_commit.py").read_text(encoding="utf-8")
        (tmp_path / "wrong.py").write_text(text.replace('slow="STALE"', 'slow="COMMITTED"', 1))
        result = run_scenario(_load_from(tmp_path / "wrong.py"))
        assert [(c.name, c.reason) for c in result.checks if not c.passed] == [("slow -> COMMITTED", "got STALE")]

    def test_a_race_table_has_no_per_actor_expectation(self) -> None:
        """A race scenario's table is graded as a whole: one table check, and no expected outcome per actor."""
        result = run_scenario(_load("race_two_requests"))
        assert result.expect == {} and [c.name for c in result.checks if c.kind == "table"] == [
            "the outcome is in the table"
        ]


class TestWire:
    def test_wire_builds_the_session_with_the_labs_lock_and_probe(self) -> None:
        """wire(cls, "s1") passes lock s1.lock and probe s1; name= overrides; a non-string first argument needs it."""
        from lab import ScenarioError, TransactionalChat, VersionedSession
        from lab.engine.core import Scheduler
        from lab.scenarios.base import Lab

        lab = Lab(Scheduler())
        session = lab.wire(VersionedSession, "s1", max_rounds=2)
        assert (session.session_id, session.max_rounds) == ("s1", 2)
        again = lab.wire(VersionedSession, "s1", name="worker")
        assert again.session_id == "s1"
        with pytest.raises(ScenarioError, match=r"two lab objects are named 's1\.lock'"):
            lab.wire(VersionedSession, "s1")
        with pytest.raises(ScenarioError, match=r"wire\(TransactionalChat, \.\.\.\) needs name="):
            lab.wire(TransactionalChat, lab.transport("model"))


GUIDE = ROOT / "docs" / "writing-scenarios.md"


class TestTemplate:
    @pytest.mark.timeout(60)
    def test_the_template_is_on_the_new_api_passes_and_explores_clean(self, tmp_path: Path) -> None:
        """``lab new``'s text: @actor methods and only(...), a run that passes, an exploration that passes."""
        text = template_text("my_race")
        assert "@actor" in text and "outcomes = only(" in text and "self.lab.wire(" in text
        (tmp_path / "my_race.py").write_text(text, encoding="utf-8")
        loaded = _load_from(tmp_path / "my_race.py")
        assert loaded.cls.__name__ == "MyRace" and loaded.cls.actors == ("first", "second")
        assert run_scenario(loaded).verdict is Verdict.PASS
        assert explore_scenario(loaded).verdict is ExploreVerdict.PASS


class TestGuide:
    def test_the_anatomy_example_is_the_shipped_file(self) -> None:
        """docs/writing-scenarios.md quotes scenarios/out_of_order_commit.py whole, as it is today."""
        marker = "<!-- quoted from scenarios/out_of_order_commit.py -->\n```python\n"
        text = GUIDE.read_text(encoding="utf-8")
        assert marker in text
        quoted = text.split(marker, 1)[1].split("```\n", 1)[0]
        assert quoted == (SCENARIOS / "out_of_order_commit.py").read_text(encoding="utf-8")

    @pytest.mark.timeout(60)
    def test_the_anatomy_example_explores_clean(self) -> None:
        """The example a learner copies is not a racy first draft: every interleaving leaves its one outcome."""
        for granularity in ("probe", "line"):
            found = explore_scenario(_load("out_of_order_commit"), granularity=granularity)
            assert found.verdict is ExploreVerdict.PASS, (granularity, found.problem)

    def test_every_name_the_guide_imports_from_lab_exists(self) -> None:
        """The guide's code imports only from lab, and only names lab exports."""
        import lab

        text = GUIDE.read_text(encoding="utf-8")
        imports = [line for line in text.splitlines() if line.startswith(("from lab", "import lab"))]
        assert imports and all(line.startswith("from lab import ") for line in imports), imports
        names = {name.strip() for line in imports for name in line.removeprefix("from lab import ").split(",")}
        assert names <= set(lab.__all__), names - set(lab.__all__)


def _file(body: str, *, doc: str = '"""x"""\n') -> str:
    return f'{doc}from lab import Scenario, actor, only\nclass A(Scenario):\n    source="s"\n{body}'


def _load_from(path: Path) -> LoadedScenario:
    item = load(path)
    assert isinstance(item, LoadedScenario), str(item)
    return item
