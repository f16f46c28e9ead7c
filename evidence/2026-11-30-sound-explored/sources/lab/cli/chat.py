"""``lab chat``: the chat console (:mod:`lab.console`), which parses its own flags."""

from __future__ import annotations

from collections.abc import Sequence


def main(argv: Sequence[str]) -> int:
    """Hand ``argv`` (the words after ``chat``) to the console's own entry point."""
    from lab.console import main as console_main

    return console_main(["chat", *argv])
