"""Run the lab's scenarios into a new evidence folder; explore their interleavings; replay one.

The same as the ``lab`` command (``lab run``, ``lab explore``, ``lab replay``, ``lab list``, ``lab new``), under the
flags it always had:

    python run.py --out evidence/my-run [--scenario NAME ...]      run, print a summary, write the evidence
    python run.py --explore --out DIR [--granularity probe|line|instruction|both] [--preemptions K] [--max-schedules N]
                  [--variant V] [--save-scenario NAME]
    python run.py --replay NAME:SCHEDULE [--granularity G] [--variant V]
    python run.py --list                                           list scenarios and their lessons
    python run.py --new NAME                                       write a new scenario file from the template

Exit codes: 0 every check passed; 1 a check failed, a scenario errored, an exploration failed or was incomplete,
a replay diverged, a counterexample could not be saved, or --sign could not sign (the evidence is still written);
2 a usage error, with nothing written; 3 the evidence could not be written (a full disk): one line, the folder left
unfinished; 130 interrupted (Ctrl-C): one line, the folder (if it was made) left unfinished.
"""

from __future__ import annotations

import sys

_INTERRUPTED: list[int] = []


def _on_interrupt(number: int, frame: object) -> None:
    """Ctrl-C: remembered, then raised. Python drops an exception raised where it cannot stop (a callback of the
    import system, one it runs around a fork, a finalizer); the command then ends on what it remembered."""
    _INTERRUPTED.append(number)
    raise KeyboardInterrupt


def _unraisable(hook: object) -> object:
    """Python's report of an exception it dropped, less the dropped Ctrl-C (remembered, and said in one line)."""

    def report(unraisable: sys.UnraisableHookArgs) -> None:
        if not issubclass(unraisable.exc_type, KeyboardInterrupt):
            hook(unraisable)  # type: ignore[operator]

    return report


try:  # a Ctrl-C while the lab is still being imported is one line too, not a traceback
    import signal

    if __name__ == "__main__":
        signal.signal(signal.SIGINT, _on_interrupt)
        sys.unraisablehook = _unraisable(sys.unraisablehook)  # type: ignore[assignment]
    from pathlib import Path

    from rich.console import Console

    from lab.cli import main as lab_main
    from lab.cli.common import Output
    from lab.cli.legacy import run_words
    from lab.errors import LabError

    if _INTERRUPTED:  # dropped by the import system: not a reason to go on
        raise KeyboardInterrupt
except BaseException as error:  # Python may wrap the Ctrl-C (a class's __set_name__ makes it a RuntimeError)
    if not isinstance(error, KeyboardInterrupt) and not _INTERRUPTED:
        raise
    sys.stderr.write("run.py: interrupted; nothing was written\n")
    sys.exit(130)

ROOT = Path(__file__).resolve().parent
SCENARIOS = ROOT / "scenarios"


def main(argv: list[str] | None = None, *, console: Console | None = None) -> int:
    """Parse ``argv`` under the old flags, act as the ``lab`` subcommand they mean, and return the exit code."""
    words = sys.argv[1:] if argv is None else list(argv)
    try:
        translated = run_words(words, SCENARIOS)
    except LabError as error:
        Output(Console(), "run.py").fail(str(error))
        return 2
    return lab_main(translated, console_out=console, prog="run.py", root=ROOT, recorded=["run.py", *words])


if __name__ == "__main__":
    try:
        code = main()
    except BaseException as error:  # between the lab's own handlers: before its command began, or after it ended
        if not isinstance(error, KeyboardInterrupt) and not _INTERRUPTED:
            raise
        sys.stderr.write("run.py: interrupted\n")
        sys.exit(130)
    if _INTERRUPTED and code != 130:  # dropped where Python could not stop, so the lab's handlers never saw it
        sys.stderr.write("run.py: interrupted\n")
        sys.exit(130)
    sys.exit(code)
