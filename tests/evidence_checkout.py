"""A frozen copy of the checkout's behaviour files, for tests that write an evidence folder and audit it later.

An audit compares the archived code with the auditing checkout, and the lab's machinery differing between them is a
problem. In a working tree that people edit while the tests run, a file saved between a fixture writing a folder and
a test auditing it would fail that test for a reason that is not its own. So these tests write from, and audit
against, a copy of the behaviour files made once, when this module is imported (at collection, right after the lab
itself was imported): the code that ran, the archive and the judge are then the same files. A fresh clone (CI)
behaves exactly as the live checkout would.
"""

from __future__ import annotations

import atexit
import contextlib
import shutil
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

import lab.evidence.verify.auditor as auditor
from lab.evidence.records import sources

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import audit as audit_command  # noqa: E402  (audit.py and run.py live at the repository root)
import run  # noqa: E402


def _freeze() -> Path:
    base = Path(tempfile.mkdtemp(prefix="lab-frozen-checkout-"))
    atexit.register(shutil.rmtree, base, True)
    for file in sources.collect(ROOT):
        target = base / file.path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(file.data)
    return base


FROZEN = _freeze()
"""The copy: ``lab/``, ``scenarios/``, ``run.py``, ``audit.py`` and ``pyproject.toml`` as they were at collection."""


@contextlib.contextmanager
def frozen_checkout() -> Iterator[Path]:
    """run.py writes from :data:`FROZEN`, and audit.py and :func:`lab.evidence.audit` judge against it."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(run, "ROOT", FROZEN)
        patch.setattr(run, "SCENARIOS", FROZEN / "scenarios")
        patch.setattr(auditor, "AUDITING_CHECKOUT", FROZEN)
        patch.setattr(audit_command, "ROOT", FROZEN)
        yield FROZEN
