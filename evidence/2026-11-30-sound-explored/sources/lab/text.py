"""How the lab shows a value or an exception in one line of a report, a check or a problem.

Graded checks (:mod:`lab.scenarios.runner`), pinned replays (:mod:`lab.scenarios.pinning`) and the auditor's problems
(:mod:`lab.evidence.records.text`) all cut long values and name exceptions the same way, so this leaf, which
imports nothing of the lab, keeps the one way of doing it.
"""

from __future__ import annotations


def shorten(text: str, width: int) -> str:
    """``text`` cut to ``width`` characters, its end replaced by ``...`` when it was longer.

    >>> shorten("fast: COMMITTED", 20), shorten("fast: COMMITTED", 10)
    ('fast: COMMITTED', 'fast: C...')
    """
    return text if len(text) <= width else text[: width - 3] + "..."


def one_line(error: BaseException) -> str:
    """An exception as one line: its type and the first line of its message.

    >>> one_line(KeyError("x")), one_line(ValueError("two\\nlines")), one_line(RuntimeError())
    ("KeyError: 'x'", 'ValueError: two', 'RuntimeError')
    """
    lines = str(error).strip().splitlines()
    return f"{type(error).__name__}: {lines[0]}" if lines else type(error).__name__
