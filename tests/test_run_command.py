"""run.py as a command: listing, scaffolding, replay, and one-line usage errors."""

from __future__ import annotations

import io
import subprocess
import sys
from pathlib import Path

import pytest
from rich.console import Console

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import run  # noqa: E402


def _main(argv: list[str]) -> tuple[int, str]:
    buffer = io.StringIO()
    code = run.main(argv, console=Console(file=buffer, width=200, color_system=None))
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
        from lab.engine.schedule import schedule_string
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
        ],
    )
    def test_one_line_and_exit_2(self, argv: list[str], message: str, capsys: pytest.CaptureFixture[str]) -> None:
        """A usage mistake is one line on stderr and exit code 2, nothing written."""
        code, _ = _main(argv)
        err = capsys.readouterr().err
        assert code == 2
        assert err.count("\n") == 1 and err.startswith("run.py: ")
        assert message in err

    @pytest.mark.timeout(30)
    def test_unknown_scenario_touches_nothing(self, tmp_path: Path) -> None:
        """An unknown scenario name is refused before the evidence folder is created."""
        out = subprocess.run([sys.executable, "run.py", "--out", str(tmp_path / "ev"), "--scenario", "nope"],
                             cwd=ROOT, capture_output=True, text=True, timeout=25)
        assert out.returncode == 2 and not (tmp_path / "ev").exists()
        assert "Traceback" not in out.stderr
