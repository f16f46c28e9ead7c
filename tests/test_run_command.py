"""run.py as a command (the lab command under its first flags): listing, scaffolding, replay, one-line usage
errors; and the docs' exploration example, as ``lab explore``."""

from __future__ import annotations

import io
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import run  # noqa: E402


def _main(argv: list[str]) -> tuple[int, str]:
    buffer = io.StringIO()
    code = run.main(argv, console=Console(file=buffer, width=200, color_system=None))
    return code, buffer.getvalue()


def _lab(argv: list[str], *, root: Path) -> tuple[int, str]:
    """``lab ARGV`` (:func:`lab.cli.main`) recording the sources of the checkout at ``root``."""
    from lab.cli import main

    buffer = io.StringIO()
    code = main(argv, console_out=Console(file=buffer, width=200, color_system=None), root=root)
    return code, buffer.getvalue()


class TestListAndNew:
    def test_list_shows_every_scenario_with_its_lesson(self) -> None:
        """--list names each scenario and the first line of its docstring."""
        code, out = _main(["--list"])
        assert code == 0
        assert "out_of_order_commit" in out and "STALE" in out
        assert "[mutant]" in out

    @pytest.mark.timeout(20)
    def test_new_writes_a_template_that_passes(self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
        """--new writes a commented scenario that runs as is, and refuses to overwrite it."""
        monkeypatch.setattr(run, "SCENARIOS", tmp_path)
        monkeypatch.setattr(run, "ROOT", tmp_path)
        code, _ = _main(["--new", "my_race"])
        assert code == 0 and (tmp_path / "my_race.py").exists()
        from lab.scenarios.loader import LoadedScenario, load
        from lab.scenarios.runner import run_scenario

        item = load(tmp_path / "my_race.py")
        assert isinstance(item, LoadedScenario)
        assert run_scenario(item).passed
        before = (tmp_path / "my_race.py").read_text("utf-8")
        code, _ = _main(["--new", "my_race"])
        assert code == 2 and (tmp_path / "my_race.py").read_text("utf-8") == before


@pytest.mark.timeout(30)
class TestReplay:
    def test_replay_prints_one_column_per_actor(self) -> None:
        """A recorded schedule replays as a table with a column per actor, switches and state rows."""
        code, out = _main(["--replay", "race_two_requests:0:01-1:01", "--variant", "VersionedSession"])
        assert code == 1  # this short string ends before the run does: the replay says so
        assert "diverged" in out and "schedule has ended" in out

    def test_full_replay_succeeds(self) -> None:
        """The schedule of the default run replays to the end with exit 0."""
        from lab.engine.core import schedule_string
        from lab.scenarios.loader import LoadedScenario, load
        from lab.scenarios.runner import run_scenario

        item = load(ROOT / "scenarios" / "out_of_order_commit.py")
        assert isinstance(item, LoadedScenario)
        result = run_scenario(item)
        assert result.run is not None
        schedule = schedule_string(result.run.decisions, item.cls.actors)
        code, out = _main(["--replay", f"out_of_order_commit:{schedule}"])
        assert code == 0, out
        assert "slow" in out and "fast" in out and "state:" in out and "-> STALE" in out


class TestUsageErrors:
    @pytest.mark.parametrize(
        ("argv", "message"),
        [
            ([], "one of the arguments"),
            (["--out", "x", "--list"], "not allowed with"),
            (["--list", "--save-scenario", "x"], "--save-scenario goes with --explore"),
            (["--list", "--watchdog", "0"], "--watchdog"),
            (["--replay", "nocolon"], "NAME:SCHEDULE"),
            (["--replay", "no_such:0:01"], "unknown scenario 'no_such'"),
            (["--new", "Bad-Name"], "lower_snake_case"),
            (["--out", "/nonexistent-parent/x"], ""),
            (
                ["--out", "/nonexistent-parent/x", "--variant", "CheckOutsideLockSession"],
                "--variant goes with --explore or --replay",
            ),
            (["--out", "/nonexistent-parent/x", "--granularity", "line"], "--granularity goes with --explore or"),
            (["--out", "/nonexistent-parent/x", "--preemptions", "2"], "--preemptions goes with --explore"),
            (["--out", "/nonexistent-parent/x", "--max-schedules", "5"], "--max-schedules goes with --explore"),
            (
                ["--replay", "race_two_requests:0:01", "--scenario", "race_two_requests"],
                "--scenario goes with --out (--replay names its scenario in NAME:SCHEDULE)",
            ),
            (["--list", "--scenario", "out_of_order_commit"], "--scenario goes with --out"),
            (["--new", "abc", "--watchdog", "3"], "--watchdog goes with --out or --replay"),
            (["--list", "--variant", "CheckOutsideLockSession"], "--variant goes with --explore or --replay"),
            (
                ["--explore", "--out", "/nonexistent-parent/x", "--save-scenario", "race_two_requests"],
                "scenarios/race_two_requests.py already exists; choose another name (nothing was written)",
            ),
            (["--explore", "--out", "/nonexistent-parent/x", "--save-scenario", "Bad-Name"], "lower_snake_case"),
            (
                [
                    "--explore",
                    "--out",
                    "/nonexistent-parent/x",
                    "--scenario",
                    "out_of_order_commit",
                    "--variant",
                    "CheckOutsideLockSession",
                ],
                "scenario out_of_order_commit does not declare it (its variants: none",
            ),
            (
                ["--explore", "--out", "/nonexistent-parent/x", "--variant", "NoSuchSession"],
                "--variant NoSuchSession: no selected scenario declares it (declared variants: ",
            ),
            (["--replay", "race_two_requests:0:01", "--variant", "NoSuchSession"], "no variant 'NoSuchSession'"),
        ],
    )
    def test_one_line_and_exit_2(self, argv: list[str], message: str, capsys: pytest.CaptureFixture[str]) -> None:
        """A usage mistake is one line on stderr and exit code 2, nothing written."""
        code, _ = _main(argv)
        err = capsys.readouterr().err
        assert code == 2
        assert err.count("\n") == 1 and err.startswith("run.py: ")
        assert message in err

    @pytest.mark.slow
    @pytest.mark.timeout(30)
    def test_unknown_scenario_touches_nothing(self, tmp_path: Path) -> None:
        """An unknown scenario name is refused before the evidence folder is created."""
        out = subprocess.run(
            [sys.executable, "run.py", "--out", str(tmp_path / "ev"), "--scenario", "nope"],
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=25,
        )
        assert out.returncode == 2 and not (tmp_path / "ev").exists()
        assert "Traceback" not in out.stderr


class TestMistakesWriteNothing:
    @pytest.mark.slow
    @pytest.mark.timeout(30)
    def test_a_variant_the_scenario_lacks_is_refused_before_the_folder_exists(self, tmp_path: Path) -> None:
        """--variant checks every named scenario before the evidence folder is created."""
        out = subprocess.run(
            [
                sys.executable,
                "run.py",
                "--explore",
                "--out",
                str(tmp_path / "ev"),
                "--scenario",
                "race_two_requests",
                "--scenario",
                "out_of_order_commit",
                "--variant",
                "CheckOutsideLockSession",
            ],
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=25,
        )
        assert out.returncode == 2 and not (tmp_path / "ev").exists()
        assert out.stderr.count("\n") == 1 and "out_of_order_commit does not declare it" in out.stderr
        assert "Traceback" not in out.stderr


class TestExploreVariant:
    def test_without_scenario_only_the_scenarios_declaring_it_are_explored(self) -> None:
        """No --scenario: the scenarios that declare the variant are kept, the others are left out."""
        from lab.campaign import ExploreSettings
        from lab.campaign.exploring import plan
        from lab.scenarios.loader import LoadedScenario, load_all

        loaded = [item for item in load_all(run.SCENARIOS) if isinstance(item, LoadedScenario)]
        kept = plan(run.SCENARIOS, [], ExploreSettings(variant="CheckOutsideLockSession")).to_explore
        assert kept and len(kept) < len(loaded)
        assert all("CheckOutsideLockSession" in item.cls.variants and item.cls.pin is None for item in kept)
        assert "race_two_requests" in {item.name for item in kept}

    @pytest.mark.slow
    @pytest.mark.timeout(60)
    def test_explore_variant_explores_that_variant_and_skips_the_kill_matrix(self, tmp_path: Path) -> None:
        """The mutant is explored (and killed); its FAIL is its lesson, so the run still passes; no kill matrix."""
        code, out = _main(
            [
                "--explore",
                "--out",
                str(tmp_path / "ev"),
                "--scenario",
                "race_two_requests",
                "--variant",
                "CheckOutsideLockSession",
            ]
        )
        assert code == 0, out
        assert (tmp_path / "ev" / "explore" / "race_two_requests" / "probe.CheckOutsideLockSession.json").exists()
        assert not (tmp_path / "ev" / "explore" / "race_two_requests" / "probe.VersionedSession.json").exists()
        assert "--variant CheckOutsideLockSession" in out  # the counterexample's replay command
        assert "kill matrix: not built: --variant CheckOutsideLockSession explores one variant" in out


def _checkout(root: Path, monkeypatch: pytest.MonkeyPatch, *scenarios: str) -> Path:
    """A scratch checkout holding only ``scenarios``, with run.py pointed at it; returns its scenarios folder.

    The evidence folder archives the checkout's sources and its self-audit re-runs them, so a scenario saved into
    the scratch folder must be part of that checkout, as it would be in a real one.
    """
    shutil.copytree(ROOT / "lab", root / "lab", ignore=shutil.ignore_patterns("__pycache__"))
    for name in ("run.py", "audit.py", "pyproject.toml"):
        shutil.copy(ROOT / name, root / name)
    folder = root / "scenarios"
    folder.mkdir()
    for name in scenarios:
        shutil.copy(ROOT / "scenarios" / f"{name}.py", folder / f"{name}.py")
    monkeypatch.setattr(run, "ROOT", root)
    monkeypatch.setattr(run, "SCENARIOS", folder)
    return folder


def _self_audit_without_reexecution(monkeypatch: pytest.MonkeyPatch) -> None:
    """The evidence writer's self-audit, less its re-execution in a child process (which explores everything a
    second time, doubling the test's cost); integrity and consistency are still checked. tests/test_audit.py and
    tests/test_evidence_exploration.py cover the re-execution."""
    import lab.evidence.write.writer as writer

    real = writer.audit

    def audit(folder: Path, **options: Any) -> Any:
        return real(folder, **{**options, "rerun": False})

    monkeypatch.setattr(writer, "audit", audit)


class TestSaveScenario:
    @pytest.mark.slow
    @pytest.mark.timeout(60)
    def test_the_docs_example_saves_a_pinned_lesson_the_suite_accepts(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
    ) -> None:
        """docs/exploration.md's --save-scenario command, run as written into a scratch scenarios folder.

        The correct session passes, so the counterexample comes from a mutant of the kill matrix. The saved file
        passes as the suite's runner grades every scenario file, and later explorations leave it out.
        """
        import shlex

        from lab.scenarios.kill_matrix import build_kill_matrix, race_scenario
        from lab.scenarios.loader import LoadedScenario, load
        from lab.scenarios.runner import run_scenario

        docs = (ROOT / "docs" / "exploration.md").read_text(encoding="utf-8")
        command = next(line for line in docs.splitlines() if "--save-scenario double_commit" in line)
        argv = shlex.split(command.split("#")[0])
        assert argv[:2] == ["lab", "explore"]
        argv = argv[1:]
        argv[argv.index("--out") + 1] = str(tmp_path / "explore-3")
        folder = _checkout(tmp_path / "checkout", monkeypatch, "race_two_requests")
        _self_audit_without_reexecution(monkeypatch)

        code, out = _lab([*argv, "--scenarios", str(folder)], root=run.ROOT)
        saved = folder / "double_commit.py"
        assert code == 0 and "self-audit ok" in out and (tmp_path / "explore-3" / "run.json").exists(), out
        assert "saved the counterexample of race_two_requests over CheckOutsideLockSession (probe)" in out
        assert saved.exists()

        pinned = load(saved)
        assert isinstance(pinned, LoadedScenario), str(pinned)
        result = run_scenario(pinned)
        assert result.passed, [(c.name, c.reason) for c in result.checks if not c.passed]
        assert result.mutant and result.variant == "CheckOutsideLockSession"
        assert any("the bug shows" in c.name and c.passed for c in result.checks)  # as tests/test_scenarios.py asks
        assert result.outcomes == {"slow": "COMMITTED", "fast": "COMMITTED"} and result.state["tickets"] == "same"

        assert not race_scenario(pinned)
        assert build_kill_matrix([pinned]).cells == ()
        code, out = _main(["--explore", "--out", str(tmp_path / "again"), "--scenario", "double_commit"])
        assert code == 0, out
        assert (
            "not explored: double_commit is pinned to one schedule of race_two_requests (variant "
            "CheckOutsideLockSession, probe granularity)"
        ) in out
        assert not (tmp_path / "again" / "explore" / "double_commit").exists()

        code, out = _main(["--replay", f"double_commit:{pinned.cls.pin.schedule}"])
        assert code == 0 and "slow=COMMITTED" in out and "fast=COMMITTED" in out, out

        before = saved.read_text("utf-8")
        capsys.readouterr()
        code, _ = _lab([*argv, "--scenarios", str(folder)], root=run.ROOT)  # again: the file exists, nothing runs
        assert code == 2 and saved.read_text("utf-8") == before
        assert "double_commit.py already exists" in capsys.readouterr().err
        saved.unlink()

    @pytest.mark.slow
    @pytest.mark.timeout(30)
    def test_nothing_to_save_writes_nothing(self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
        """A latch-ordered lesson has no counterexample: one line says so and no file appears."""
        folder = _checkout(tmp_path / "checkout", monkeypatch, "out_of_order_commit")
        code, out = _main(["--explore", "--out", str(tmp_path / "ev"), "--save-scenario", "nothing_here"])
        assert code == 0, out
        assert "no counterexample to save: every exploration passed; nothing_here.py was not written" in out
        assert not (folder / "nothing_here.py").exists()


class TestExploreStrategy:
    @pytest.mark.slow
    @pytest.mark.timeout(120)
    def test_a_portfolio_that_finds_is_recorded_and_audits_ok(self, tmp_path: Path) -> None:
        """lab explore --strategy portfolio --mode find: each record says how it searched, the kill matrix (always
        DPOR, proving) is not compared with explorations another search made, and the self-audit re-explores both."""
        import json

        folder = tmp_path / "ev"
        code, out = _main(
            ["--explore", "--out", str(folder), "--scenario", "race_two_requests", "--strategy", "portfolio",
             "--mode", "find", "--seed", "3"]
        )  # fmt: skip
        assert code == 0, out
        assert "self-audit ok" in out
        record = json.loads((folder / "explore" / "race_two_requests" / "probe.VersionedSession.json").read_text())
        assert record["search"]["strategy"] == "portfolio" and record["search"]["seed"] == 3
        assert record["search"]["mode"] == "find"

    def test_an_unknown_strategy_is_one_line(self, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
        code, out = _main(["--explore", "--out", str(tmp_path / "ev"), "--strategy", "bfs"])
        said = (out + capsys.readouterr().err).strip().splitlines()
        assert code == 2 and not (tmp_path / "ev").exists()
        assert len(said) == 1 and "invalid choice: 'bfs'" in said[0]
