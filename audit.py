"""Re-verify an evidence folder written by run.py; it never writes anything, into the folder or elsewhere.

The same as ``lab audit`` (:mod:`lab.cli.audit`), comparing with this checkout unless ``--checkout`` names another:

    python audit.py DIR                   verify integrity, consistency and sources, and re-execute every scenario
                                          with this checkout's code, if the archived code is identical to it
    python audit.py DIR --no-rerun        the same, without re-execution
    python audit.py DIR --execute-archive re-execute the archived code itself, contained (docs/evidence.md)
    python audit.py DIR --accept-drift    the lab's machinery may differ from this checkout (recorded in the report)
    python audit.py DIR --allowed-signers FILE  require SHA256SUMS.sig to verify (ssh-keygen -Y verify)
    python audit.py DIR --json            print the report as JSON
    python audit.py DIR --checkout PATH   compare with (and run) the trusted tree PATH instead of this checkout

Exit codes: 0 everything verified; 1 problems were found (each listed on one line, with its file), or the run
that wrote DIR did not finish; 2 DIR is not an evidence folder at all, or the arguments are wrong; 130 interrupted.
"""

from __future__ import annotations

import sys

sys.dont_write_bytecode = True  # an audit leaves no trace, not even __pycache__ beside the code it imports

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
    from lab.cli.legacy import audit_words

    if _INTERRUPTED:  # dropped by the import system: not a reason to go on
        raise KeyboardInterrupt
except BaseException as error:  # Python may wrap the Ctrl-C (a class's __set_name__ makes it a RuntimeError)
    if not isinstance(error, KeyboardInterrupt) and not _INTERRUPTED:
        raise
    sys.stderr.write("audit.py: interrupted; nothing was written, and the folder was not judged\n")
    sys.exit(130)

ROOT = Path(__file__).resolve().parent


def main(argv: list[str] | None = None, *, console: Console | None = None) -> int:
    """Parse ``argv``, audit, print the report, and return the exit code."""
    words = sys.argv[1:] if argv is None else list(argv)
    return lab_main(audit_words(words, ROOT), console_out=console, prog="audit.py")


if __name__ == "__main__":
    try:
        code = main()
    except BaseException as error:  # between the lab's own handlers: before its command began, or after it ended
        if not isinstance(error, KeyboardInterrupt) and not _INTERRUPTED:
            raise
        sys.stderr.write("audit.py: interrupted; the folder was not judged\n")
        sys.exit(130)
    if _INTERRUPTED and code != 130:  # dropped where Python could not stop, so the lab's handlers never saw it
        sys.stderr.write("audit.py: interrupted; the folder was not judged\n")
        sys.exit(130)
    sys.exit(code)
