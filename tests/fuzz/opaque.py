"""Helpers the fuzzer's programs call from a module that is *not* under test (the lab does not rewrite it, so it
records nothing here): whatever these functions touch must be charged to the call by the footprint of a call into
unknown code. Each reaches state in a different way: what it is handed (``add_to``), an attribute of what it is
handed (``bump``, ``peek``), two levels down (``store_deep``), its own module's globals (``record``, ``logged``), and
a callable it is handed and calls (``call``), which is code under test again.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

LOG: list[int] = []
"""This module's own state: a program's ``setup()`` clears it."""


def add_to(items: list[int], c: int) -> None:
    items.append(c)


def bump(box: Any, c: int) -> None:
    box.x = box.x + c


def peek(box: Any) -> int:
    return int(box.x)


def store_deep(holder: Any, c: int) -> None:
    holder.store.items.append(c)


def record(c: int) -> None:
    LOG.append(c)


def logged() -> int:
    return len(LOG)


def total(items: list[int]) -> int:
    return sum(items)


def call(f: Callable[[int], Any], c: int) -> Any:
    return f(c)
