"""Every command of ``lab`` reads at 80 and 120 columns and in a pipe: no line past the width, no cut cell, no name
or word split in the middle (a zero-width column would split every one), no control sequence in a pipe."""

from __future__ import annotations

import io
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from rich.console import Console

from lab.cli import main
from lab.scenarios.loader import LoadedScenario, load

ROOT = Path(__file__).resolve().parent.parent
WIDTHS = (80, 120)
SCENARIOS = ("out_of_order_commit", "race_two_requests")
_BORDERS = re.compile(r"[\s│┃║|]+")


def _lab(argv: list[str], width: int) -> tuple[int, str]:
    buffer = io.StringIO()
    code = main(argv, console_out=Console(file=buffer, width=width, color_system=None))
    return code, buffer.getvalue()


def _piped(argv: list[str], columns: int | None = None) -> subprocess.CompletedProcess[str]:
    """``python -m lab ARGV`` with standard output a pipe, ``COLUMNS`` set or not."""
    env = {key: value for key, value in os.environ.items() if key not in {"COLUMNS", "LINES"}}
    if columns is not None:
        env["COLUMNS"] = str(columns)
    done = subprocess.run(
        [sys.executable, "-m", "lab", *argv], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120
    )
    assert "Traceback" not in done.stderr, done.stderr
    return done


def _readable(text: str, width: int, words: list[str]) -> None:
    """Each line fits; no cell was cut; each of ``words`` (names, verdicts, every word of a lesson) is whole."""
    lines = text.splitlines()
    assert lines, "nothing printed"
    assert all(len(line.rstrip()) <= width for line in lines), max(lines, key=len)
    assert "…" not in text, "a cell was cut"
    tokens = set(_BORDERS.split(text))
    tokens |= {token.rstrip(":,;") for token in tokens}  # "slow:" names the actor slow
    for word in words:
        assert word in tokens, f"{word!r} is cut or split (width {width})"


def _words(*texts: str) -> list[str]:
    return [word for text in texts for word in text.split()]


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A scenario folder outside the checkout, holding two of its scenarios."""
    path = tmp_path_factory.mktemp("project") / "scenarios"
    path.mkdir()
    for name in SCENARIOS:
        shutil.copy(ROOT / "scenarios" / f"{name}.py", path / f"{name}.py")
    return path


@pytest.fixture(scope="module")
def loaded(folder: Path) -> list[LoadedScenario]:
    items = [load(folder / f"{name}.py") for name in SCENARIOS]
    assert all(isinstance(item, LoadedScenario) for item in items)
    return [item for item in items if isinstance(item, LoadedScenario)]


@pytest.fixture(scope="module")
def evidence(folder: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One run of the folder, written once for the audit tests."""
    out = tmp_path_factory.mktemp("evidence") / "ev"
    code, text = _lab(["run", "--scenarios", str(folder), "--out", str(out)], 120)
    assert code == 0, text
    return out


@pytest.mark.parametrize("width", WIDTHS)
def test_list(folder: Path, loaded: list[LoadedScenario], width: int) -> None:
    """The list: each name at the start of a line, each lesson whole."""
    code, text = _lab(["list", "--scenarios", str(folder)], width)
    assert code == 0
    _readable(text, width, [item.name for item in loaded] + _words(*(item.lesson for item in loaded)))
    for item in loaded:
        assert any(line.strip(" │┃").startswith(item.name) for line in text.splitlines()), item.name


@pytest.mark.slow
@pytest.mark.timeout(60)
@pytest.mark.parametrize("width", WIDTHS)
def test_run(folder: Path, loaded: list[LoadedScenario], width: int, tmp_path: Path) -> None:
    """The run: a line per scenario as it finishes (verdict first), then the summary, every word whole; at 80
    columns the summary is one scenario per line (verdict, name, outcome) with its lesson on its own line."""
    code, text = _lab(["run", "--scenarios", str(folder), "--out", str(tmp_path / "ev")], width)
    assert code == 0, text
    _readable(text, width, [*SCENARIOS, "PASS", "STALE,", "COMMITTED", *_words(*(item.lesson for item in loaded))])
    lines = text.splitlines()
    assert {"PASS out_of_order_commit  (1/2)", "PASS out_of_order_commit  (2/2)"} & set(lines)  # as it finished
    if width == 80:
        assert any(line.startswith("PASS out_of_order_commit  slow: STALE, fast: COMMITTED") for line in lines)


@pytest.mark.slow
@pytest.mark.timeout(60)
@pytest.mark.parametrize("width", WIDTHS)
def test_explore_one_scenario(folder: Path, width: int, tmp_path: Path) -> None:
    """An exploration: a line per exploration as it finishes, then its table (or lines), readable."""
    argv = ["explore", "--scenarios", str(folder), "--scenario", "out_of_order_commit", "--out", str(tmp_path / "x")]
    code, text = _lab([*argv, "--granularity", "both"], width)
    assert code == 0, text
    _readable(text, width, ["out_of_order_commit", "PASS", "probe", "line"])
    assert any(line.startswith("PASS explored out_of_order_commit (line)") for line in text.splitlines())


@pytest.mark.timeout(60)
@pytest.mark.parametrize("width", WIDTHS)
def test_replay(folder: Path, loaded: list[LoadedScenario], width: int) -> None:
    """A replay: a column per actor where it fits, else one event per line; the outcome line."""
    from lab.engine.core import schedule_string
    from lab.scenarios.runner import run_scenario

    item = loaded[0]
    result = run_scenario(item)
    assert result.run is not None
    schedule = schedule_string(result.run.decisions, item.cls.actors)
    code, text = _lab(["replay", f"{item.name}:{schedule}", "--scenarios", str(folder)], width)
    assert code == 0, text
    _readable(text, width, ["slow", "fast", "state:", "STALE", "outcome:"])


@pytest.mark.slow
@pytest.mark.timeout(60)
@pytest.mark.parametrize("width", WIDTHS)
def test_audit(evidence: Path, folder: Path, width: int) -> None:
    """An audit: each line wrapped between words (the checkout may be edited meanwhile, so its verdict is not the
    point here; tests/test_wheel.py and the evidence tests judge it)."""
    code, text = _lab(["audit", str(evidence), "--scenarios", str(folder), "--no-rerun"], width)
    assert code in (0, 1), text
    _readable(text, width, ["integrity", "consistency", "re-execution", "result:"])


@pytest.mark.parametrize("width", WIDTHS)
def test_new(tmp_path: Path, width: int) -> None:
    """``lab new``: one line naming the file and the command that runs it."""
    code, text = _lab(["new", "my_first_race", "--scenarios", str(tmp_path)], width)
    assert code == 0 and (tmp_path / "my_first_race.py").exists()
    _readable(text, width, ["wrote", "--scenario", "my_first_race"])


@pytest.mark.slow
@pytest.mark.timeout(120)
def test_in_a_pipe_the_width_is_columns_or_80_and_there_are_no_control_sequences(folder: Path, tmp_path: Path) -> None:
    """Piped, output is 80 columns unless ``COLUMNS`` says otherwise (rich would take a terminal's width from
    standard input or error), with no live display: a line per scenario as it finishes, no escape, no carriage
    return."""
    narrow = _piped(["list", "--scenarios", str(folder)])
    wide = _piped(["list", "--scenarios", str(folder)], columns=120)
    assert narrow.returncode == wide.returncode == 0
    assert max(len(line) for line in narrow.stdout.splitlines()) <= 80
    assert 80 < max(len(line) for line in wide.stdout.splitlines()) <= 120
    ran = _piped(["run", "--scenarios", str(folder), "--out", str(tmp_path / "ev")])
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert "\x1b" not in ran.stdout + ran.stderr and "\r" not in ran.stdout + ran.stderr
    progress = ran.stdout.splitlines()[:2]  # in the order they finished: two run at once
    assert sorted(line.split("  ")[0] for line in progress) == ["PASS out_of_order_commit", "PASS race_two_requests"]
    assert [line.split("  ")[1] for line in progress] == ["(1/2)", "(2/2)"]
    _readable(ran.stdout, 80, [*SCENARIOS, "PASS"])


class TestOneCommandLine:
    def test_version(self, capsys: pytest.CaptureFixture[str]) -> None:
        """``--version`` prints the package's version, the Python it runs on and where it comes from, and exits 0."""
        import platform

        import lab

        assert main(["--version"]) == 0
        shown = capsys.readouterr().out.strip()
        assert shown.startswith(f"lab {lab.__version__} ({platform.python_implementation()} "), shown
        assert "from the checkout" in shown or "installed in" in shown

    @pytest.mark.parametrize(
        ("argv", "message"),
        [
            ([], "the following arguments are required: COMMAND"),
            (["run"], "the following arguments are required: --out"),
            (["run", "--out", "x", "--variant", "V"], "--variant goes with lab explore or lab replay, not lab run"),
            (["run", "--out", "x", "--granularity=line"], "--granularity goes with lab explore or lab replay, not"),
            (["replay", "x:0:01", "--out", "x"], "--out goes with lab run or lab explore, not lab replay"),
            (["list", "--bogus"], "unrecognized arguments: --bogus (lab list --help lists its flags)"),
            (["explore", "--out", "x", "--preemptions", "-1"], "--preemptions needs a number >= 0"),
            (["explore", "--out", "x", "--max-schedules", "0"], "--max-schedules needs a number >= 1"),
            (["replay", "nocolon"], "NAME:SCHEDULE"),
            (["replay", "x:0:01", "--granularity", "both"], "invalid choice: 'both'"),
            (["list", "--scenarios", "/nonexistent"], "/nonexistent is not a folder of scenarios"),
            (["new", "Bad-Name"], "lower_snake_case"),
            (["audit", "/nonexistent"], "/nonexistent does not exist"),
            (["audit", "x", "--checkout", ".", "--scenarios", "."], "--checkout names a tree"),
            (["run", "--out", "/nonexistent-parent/x", "--watchdog", "nan"], "--watchdog needs a number"),
        ],
    )
    def test_a_mistake_is_one_line_and_exit_2(
        self, argv: list[str], message: str, capsys: pytest.CaptureFixture[str]
    ) -> None:
        """A usage mistake: one line on standard error, named after the command, exit 2, no traceback."""
        assert main(argv, console_out=Console(file=io.StringIO())) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and err.startswith("lab: ") and message in err, err

    def test_chat_is_the_console(self, monkeypatch: pytest.MonkeyPatch) -> None:
        """``lab chat ARGS`` hands ARGS to the console's own entry point."""
        import lab.console

        seen: list[list[str]] = []
        monkeypatch.setattr(lab.console, "main", lambda argv: seen.append(argv) or 0)
        assert main(["chat", "--session", "versioned"]) == 0
        assert seen == [["chat", "--session", "versioned"]]


@pytest.mark.slow
@pytest.mark.timeout(120)
def test_a_folder_elsewhere_is_archived_and_audited_as_a_checkout(folder: Path, tmp_path: Path) -> None:
    """Run over a scenario folder outside the checkout: the evidence holds the lab and exactly that folder's files,
    laid out as a checkout's; an audit naming the folder re-executes them and matches, and says what it compared
    with (never the temporary copy it made)."""
    from tests.evidence_checkout import FROZEN

    out = tmp_path / "ev"
    buffer = io.StringIO()
    code = main(["run", "--scenarios", str(folder), "--out", str(out)], console_out=Console(file=buffer), root=FROZEN)
    assert code == 0, buffer.getvalue()
    archived = out / "sources"
    assert sorted(p.name for p in (archived / "scenarios").iterdir()) == [f"{name}.py" for name in SCENARIOS]
    assert (archived / "lab" / "__init__.py").is_file() and (archived / "run.py").is_file()
    buffer = io.StringIO()
    argv = ["audit", str(out), "--scenarios", str(folder)]
    code = main(argv, console_out=Console(file=buffer, width=400), root=FROZEN)
    text = buffer.getvalue()
    assert code == 0 and "MATCHED" in text, text
    assert f"the archived sources equal {FROZEN / 'lab'} with the scenarios of {folder}" in text
    assert "lab-sources-" not in text


@pytest.mark.slow
@pytest.mark.timeout(60)
def test_a_reader_that_goes_away_ends_the_command_quietly(evidence: Path, folder: Path) -> None:
    """``lab audit DIR --json | true``: the pipe is closed before the report is written; the command stops without
    a traceback (rich handles its own writes; the JSON report is a plain print)."""
    done = subprocess.run(
        f"{sys.executable} -m lab audit {evidence} --scenarios {folder} --no-rerun --json | true",
        shell=True,
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=50,
    )
    assert "Traceback" not in done.stderr and "Broken" not in done.stderr, done.stderr
