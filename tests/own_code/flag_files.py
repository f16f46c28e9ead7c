"""Two actors that race through the file system, in a module that is not under test: what they do is invisible to
the lab (no recorded access, no conflict), so DPOR runs one schedule, while real threads reach both orders. The
program tests/test_cross_check.py builds to show a MODEL GAP."""

from __future__ import annotations

from pathlib import Path
from typing import Any


def write_flag(state: dict[str, Any]) -> None:
    Path(state["folder"], "flag").write_text("a")


def see_flag(state: dict[str, Any]) -> bool:
    return Path(state["folder"], "flag").exists()
