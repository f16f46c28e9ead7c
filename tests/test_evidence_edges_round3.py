"""Edges of run.py and audit.py, each one clear line (issue 23, point 5): a folder nested without end, a full
output device, Ctrl-C from the first line on, escape codes in path arguments, ``--out`` where evidence must not go."""

from __future__ import annotations

import io
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from rich.console import Console

from tests.evidence_checkout import FROZEN, audit_command, frozen_checkout, run

ROOT = Path(__file__).resolve().parent.parent
SCENARIO = "out_of_order_commit"


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("edges") / "ev"
    with frozen_checkout():
        assert run.main(["--out", str(out), "--scenario", SCENARIO], console=Console(file=io.StringIO())) == 0
    return out


def _one_line(err: str, prefix: str) -> None:
    assert err.count("\n") == 1 and err.startswith(prefix) and "Traceback" not in err, err


def _python(*args: str, **options: object) -> subprocess.CompletedProcess[str]:
    streams: dict[str, object] = {"stdout": subprocess.PIPE, "stderr": subprocess.PIPE}
    return subprocess.run(  # type: ignore[call-overload, no-any-return]
        [sys.executable, *args], cwd=ROOT, text=True, timeout=120, check=False, **{**streams, **options}
    )


@pytest.mark.slow
@pytest.mark.timeout(120)
def test_a_folder_nested_thousands_deep_is_one_problem(folder: Path, tmp_path: Path) -> None:
    """No recursion follows the folder's depth: 1,500 nested folders under sources/ are named, no traceback."""
    ev = Path(shutil.copytree(folder, tmp_path / "ev"))
    made = [ev / "sources"]
    for _ in range(1500):  # one mkdir at a time: os.makedirs itself recurses
        made.append(made[-1] / "d")
        made[-1].mkdir()
    (made[-1] / "x.py").write_text("x = 1\n", encoding="utf-8")
    try:
        done = _python("audit.py", str(ev), "--no-rerun")
    finally:  # from the bottom up: shutil.rmtree (pytest's clean-up) recurses too
        (made[-1] / "x.py").unlink()
        for where in reversed(made[1:]):
            where.rmdir()
    assert done.returncode == 1 and "Traceback" not in done.stderr, done.stderr
    assert "nested deeper than" in done.stdout


@pytest.mark.slow
@pytest.mark.timeout(120)
def test_a_full_output_device_still_finishes_the_evidence(tmp_path: Path) -> None:
    """``run.py > /dev/full``: the evidence is written to the end (SHA256SUMS, a self-audit), then one line."""
    if not Path("/dev/full").exists():
        pytest.skip("no /dev/full here")
    out = tmp_path / "ev"
    with open("/dev/full", "w") as full:
        done = _python(
            "run.py",
            "--out",
            str(out),
            "--scenario",
            SCENARIO,
            stdout=full,
        )
    _one_line(done.stderr, "run.py: cannot write its output: No space left on device")
    assert done.returncode == 1 and (out / "SHA256SUMS").is_file()
    assert _python("audit.py", str(out), "--no-rerun").returncode == 0


_NOT_STARTED = 99
"""The launcher's exit when a Ctrl-C landed in its own lines, before the script's first: that moment says nothing."""

_FROM_THE_FIRST_LINE = """\
import sys
script = sys.argv[1]
sys.argv = sys.argv[1:]
code = compile(open(script, encoding="utf-8").read(), script, "exec")
try:
    sys.stdout.write("go\\n")
    sys.stdout.flush()
    exec(code, {"__name__": "__main__", "__file__": script})
except KeyboardInterrupt as interrupt:
    import traceback
    if all(frame.filename != script for frame in traceback.extract_tb(interrupt.__traceback__)):
        sys.exit(NOT_STARTED)  # it landed in these lines, before the script's first
    raise
""".replace("NOT_STARTED", str(_NOT_STARTED))
"""Runs a script as ``python SCRIPT`` would, once it has said ``go``: the interpreter's own start (site, before
any line of the script) is Python's, and not the script's to make quiet; nor are these lines, where a Ctrl-C sent
just after ``go`` may land before the script's first line runs (exit :data:`_NOT_STARTED`: that moment says
nothing)."""


@pytest.mark.slow
@pytest.mark.timeout(300)
@pytest.mark.parametrize("script", ["run.py", "audit.py"])
def test_ctrl_c_at_any_moment_is_one_line_and_130(script: str, folder: Path, tmp_path: Path) -> None:
    """From the script's first line on, its imports included: one line, exit 130, never a traceback.

    The moments are fractions of how long the same command takes uninterrupted in this run, not seconds: an
    audit of a second on a quiet machine ended before a Ctrl-C sent at 1.0 s on a loaded one, or as the
    interpreter was shutting down (where CPython dies of the signal, -2, whatever the script does). A child that
    has already ended when its moment comes is not signalled, and most moments must find it still running."""

    def start(index: int) -> subprocess.Popen[str]:
        words = ["--out", str(tmp_path / f"ev{index}")] if script == "run.py" else [str(folder)]
        child = subprocess.Popen(
            [sys.executable, "-c", _FROM_THE_FIRST_LINE, script, *words],
            cwd=ROOT,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        assert child.stdout is not None and child.stdout.readline() == "go\n"
        return child

    began = time.monotonic()
    whole = start(99)
    assert whole.wait(timeout=120) == 0, whole.communicate()[1]
    took = time.monotonic() - began
    whole.communicate()
    interrupted = 0
    for index, fraction in enumerate((0.0, 0.005, 0.01, 0.03, 0.06, 0.1, 0.2, 0.3, 0.4, 0.5)):
        child = start(index)
        time.sleep(fraction * took)
        if child.poll() is not None:  # ended before its moment: this moment says nothing
            child.communicate()
            continue
        child.send_signal(signal.SIGINT)
        _, err = child.communicate(timeout=120)
        if child.returncode == _NOT_STARTED:
            continue
        assert child.returncode == 130, (fraction, took, child.returncode, err)
        _one_line(err, f"{script}: interrupted")
        interrupted += 1
    assert interrupted >= 8, f"only {interrupted} of 10 moments found {script} still running (it took {took:.2f} s)"


@pytest.mark.slow
@pytest.mark.timeout(120)
def test_escape_codes_in_path_arguments_are_shown_escaped(tmp_path: Path) -> None:
    out = tmp_path / "\x1b[31mred\x1b]0;title\x07"
    for done in (
        _python("run.py", "--out", str(out), "--scenario", SCENARIO),
        _python("audit.py", str(out), "--no-rerun"),
        _python("audit.py", str(tmp_path / "\x1b[2Jnone")),
        _python("run.py", "--out", str(tmp_path / "x"), "--sign", "\x1b[1mkey"),
    ):
        assert "\x1b" not in done.stdout + done.stderr and "\x07" not in done.stdout + done.stderr
        assert "\\x1b" in done.stdout + done.stderr


@pytest.mark.timeout(30)
@pytest.mark.parametrize("inside", ["lab/ev", "scenarios/ev", "lab/engine/ev"])
def test_out_inside_the_checkouts_code_is_refused(inside: str, capsys: pytest.CaptureFixture[str]) -> None:
    with frozen_checkout():
        code = run.main(["--out", str(FROZEN / inside)], console=Console(file=io.StringIO()))
    assert code == 2 and not (FROZEN / inside).exists()
    _one_line(capsys.readouterr().err, f"run.py: --out {FROZEN / inside} is inside ")


@pytest.mark.slow
@pytest.mark.timeout(30)
@pytest.mark.parametrize("inside", ["sources/x", "sources/lab/x", "scenarios/x"])
def test_out_inside_an_evidence_folder_is_refused(
    inside: str, folder: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    target = folder / inside
    with frozen_checkout():
        code = run.main(["--out", str(target)], console=Console(file=io.StringIO()))
    assert code == 2 and not target.exists()
    _one_line(capsys.readouterr().err, f"run.py: --out {target} is inside the evidence folder {folder}")
    assert audit_command.main([str(folder), "--no-rerun"], console=Console(file=io.StringIO())) == 0


_WRAPPED = """\
import importlib.abc, signal, sys
class Interrupts(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name == "rich.console":
            sys.meta_path.remove(self)

            class PressesCtrlC:
                def __set_name__(self, owner, name):
                    signal.raise_signal(signal.SIGINT)  # Python 3.11 re-raises it as a RuntimeError

            type("Owner", (), {"field": PressesCtrlC()})
        return None
sys.meta_path.insert(0, Interrupts())
script = sys.argv[1]
sys.argv = sys.argv[1:]
exec(compile(open(script, encoding="utf-8").read(), script, "exec"), {"__name__": "__main__", "__file__": script})
"""


@pytest.mark.timeout(60)
@pytest.mark.parametrize("script", ["run.py", "audit.py"])
def test_a_ctrl_c_python_wraps_in_another_error_is_still_one_line(script: str, tmp_path: Path) -> None:
    """A Ctrl-C that lands in a class's ``__set_name__`` while the lab is imported reaches the script as a
    RuntimeError (Python 3.11 wraps it): one full run of the test above printed its traceback, exit 1."""
    words = ["--out", str(tmp_path / "ev")] if script == "run.py" else [str(tmp_path)]
    done = _python("-c", _WRAPPED, script, *words)
    assert done.returncode == 130, done.stderr
    _one_line(done.stderr, f"{script}: interrupted; nothing was written")
    assert not (tmp_path / "ev").exists()


def test_an_error_caused_by_a_ctrl_c_is_an_interrupt() -> None:
    """The lab's commands treat an error whose cause (or context) is a Ctrl-C as the Ctrl-C: exit 130."""
    from lab.cli.app import _wraps_interrupt

    try:
        try:
            raise KeyboardInterrupt
        except KeyboardInterrupt as interrupt:
            raise RuntimeError("Error calling __set_name__") from interrupt
    except RuntimeError as wrapped:
        assert _wraps_interrupt(wrapped)
    assert not _wraps_interrupt(RuntimeError("a real error"))
