"""``run.py`` and ``audit.py``: the lab's first two commands, kept working under their old flags.

``run.py --out DIR`` is ``lab run``, ``run.py --explore --out DIR`` is ``lab explore``, ``--replay``, ``--list`` and
``--new`` are ``lab replay``, ``lab list`` and ``lab new``. The old flags are read by the one grammar
(:func:`lab.commandline.run_words`, which the auditor reads recorded commands with too) as they always were (a flag
the chosen action would ignore is refused in one line, with the same words), then the subcommand runs.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from lab.commandline import run_words


def audit_words(argv: Sequence[str], checkout: Path) -> list[str]:
    """The ``lab audit`` words that ``audit.py ARGV`` means: the trusted tree is the checkout unless named."""
    words = list(argv)
    named = any(word == "--checkout" or word.startswith("--checkout=") for word in words)
    return ["audit", *words, *([] if named else ["--checkout", str(checkout)])]


__all__ = ["audit_words", "run_words"]
