"""Containment (issue 23, point 2): a worker is in a session of its own, and a process it started that left its
session (``setsid``) is found and ended before ``run_files`` returns, so nothing of a run outlives it."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from lab.evidence.reexecute.isolation import ISOLATED, Job, run_files

DAEMON = '''"""A scenario whose import leaves a daemon behind, in a session of its own."""

import os
import time

from lab import Scenario, actor, only

if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        with open({pidfile!r}, "w") as handle:
            handle.write(str(os.getpid()))
        time.sleep(60)
    os._exit(0)


class Leaves(Scenario):
    source = "tests"
    outcomes = only(a="DONE")

    @actor
    def a(self) -> object:
        return "DONE"
'''

SESSION = '''"""A scenario that reports its own session and process group."""

import os

from lab import Scenario, actor, only

with open({where!r}, "w") as handle:
    handle.write(f"{{os.getpid()}} {{os.getsid(0)}} {{os.getpgid(0)}}")


class Mine(Scenario):
    source = "tests"
    outcomes = only(a="DONE")

    @actor
    def a(self) -> object:
        return "DONE"
'''


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            return handle.read().rsplit(b")", 1)[1].split()[0] != b"Z"
    except OSError:
        return False


@pytest.mark.skipif(not ISOLATED or not Path("/proc").is_dir(), reason="needs fork and /proc")
@pytest.mark.timeout(60)
class TestContainment:
    def test_a_setsid_daemon_does_not_outlive_the_run(self, tmp_path: Path) -> None:
        pidfile = tmp_path / "daemon.pid"
        (tmp_path / "leaves.py").write_text(DAEMON.format(pidfile=str(pidfile)), encoding="utf-8")
        (outcome,) = run_files([Job(tmp_path / "leaves.py", 5.0)])
        for _ in range(100):
            if pidfile.exists() and pidfile.read_text():
                break
            time.sleep(0.02)
        daemon = int(pidfile.read_text())
        assert not _alive(daemon), f"the daemon {daemon} outlived run_files"
        assert getattr(outcome, "verdict", None) == "PASS", outcome

    def test_each_worker_has_a_session_of_its_own(self, tmp_path: Path) -> None:
        where = tmp_path / "ids"
        (tmp_path / "mine.py").write_text(SESSION.format(where=str(where)), encoding="utf-8")
        run_files([Job(tmp_path / "mine.py", 5.0)])
        pid, session, group = map(int, where.read_text().split())
        assert session == pid == group and session != os.getsid(0)
