"""Probe points: named places in session code where an observer may look, or pause the thread.

Sessions know nothing about the lab's scheduler. They call ``probe("commit:enter")`` at points a lesson may want
to hold a thread, and the default probe does nothing. The scheduler passes its own probe in, which turns each
point into a scheduling point; production code keeps the no-op.
"""

from __future__ import annotations

from collections.abc import Callable

Probe = Callable[[str], None]


def no_probe(point: str) -> None:
    """The default probe: does nothing, costs one function call."""
