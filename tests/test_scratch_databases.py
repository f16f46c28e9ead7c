"""Scratch databases leave nothing behind, even in a forked child that ends with ``os._exit``."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

FORKS = """\
import json, os, sys
from lab import scratch_database
mine = scratch_database("parent")
read, write = os.pipe()
if os.fork() == 0:  # as the explorer's parallel workers and the cross-check do: it ends with os._exit
    os.write(write, str(scratch_database("child")).encode())
    os._exit(0)
os.close(write)
child = os.read(read, 4096).decode()
os.wait()
print(json.dumps([str(mine), child]))
"""


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")
@pytest.mark.timeout(60)
def test_a_forked_childs_scratch_database_goes_with_its_parents() -> None:
    """A forked child's scratch folder used to be a folder of its own, removed by an atexit that os._exit never
    runs: every CI run left a few in /dev/shm. Now it is made inside its parent's, which the parent removes."""
    env = {key: value for key, value in os.environ.items() if key != "LAB_SCRATCH_DIR"}
    done = subprocess.run(
        [sys.executable, "-c", FORKS], cwd=ROOT, env=env, capture_output=True, text=True, timeout=60, check=True
    )
    mine, child = map(Path, json.loads(done.stdout))
    assert child.parent.parent == mine.parent  # inside the parent's folder
    assert not mine.parent.exists() and not child.exists()
