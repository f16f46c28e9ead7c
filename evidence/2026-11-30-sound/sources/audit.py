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

from pathlib import Path  # noqa: E402  (after the bytecode switch, on purpose)

from rich.console import Console  # noqa: E402

from lab.cli import main as lab_main  # noqa: E402
from lab.cli.legacy import audit_words  # noqa: E402

ROOT = Path(__file__).resolve().parent


def main(argv: list[str] | None = None, *, console: Console | None = None) -> int:
    """Parse ``argv``, audit, print the report, and return the exit code."""
    words = sys.argv[1:] if argv is None else list(argv)
    return lab_main(audit_words(words, ROOT), console_out=console, prog="audit.py")


if __name__ == "__main__":
    sys.exit(main())
