"""Containment (issue 23, point 2): a worker is in a session of its own, and a process it started that left its
session (``setsid``) is found and ended before ``run_files`` returns, so nothing of a run outlives it."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import pytest

from lab.evidence.reexecute import worker_namespace
from lab.evidence.reexecute.isolation import ISOLATED, Job, run_files
from lab.evidence.reexecute.orphans import children
from lab.evidence.reexecute.worker_namespace import available

DAEMON = '''"""A scenario whose import leaves a daemon behind, in a session of its own."""

import os
import time

from lab import Scenario, actor, only

if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        with open({pidfile!r} + ".new", "w") as handle:
            handle.write(os.readlink("/proc/self"))  # its number outside a namespace it may be in
        os.rename({pidfile!r} + ".new", {pidfile!r})
        time.sleep(60)
    os._exit(0)
end = time.monotonic() + 30  # the scenario goes on once its daemon is there, so the run ends with it alive
while not os.path.exists({pidfile!r}) and time.monotonic() < end:
    time.sleep(0.01)


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


def _described(pid: int) -> str:
    """What /proc says of a process that should not be there: its parent, its numbers in each namespace."""
    try:
        lines = Path(f"/proc/{pid}/status").read_text(encoding="utf-8").splitlines()
    except OSError as error:
        return str(error)
    return "; ".join(line for line in lines if line.startswith(("State", "PPid", "NSpid", "NSsid")))


@pytest.mark.skipif(not ISOLATED or not Path("/proc").is_dir(), reason="needs fork and /proc")
@pytest.mark.timeout(60)
class TestContainment:
    def test_a_setsid_daemon_does_not_outlive_the_run(self, tmp_path: Path) -> None:
        pidfile = tmp_path / "daemon.pid"
        (tmp_path / "leaves.py").write_text(DAEMON.format(pidfile=str(pidfile)), encoding="utf-8")
        (outcome,) = run_files([Job(tmp_path / "leaves.py", 5.0)])
        daemon = int(pidfile.read_text())
        assert not _alive(daemon), f"the daemon {daemon} outlived run_files: {_described(daemon)}"
        assert getattr(outcome, "verdict", None) == "PASS", outcome

    def test_each_worker_has_a_session_of_its_own(self, tmp_path: Path) -> None:
        where = tmp_path / "ids"
        (tmp_path / "mine.py").write_text(SESSION.format(where=str(where)), encoding="utf-8")
        run_files([Job(tmp_path / "mine.py", 5.0)])
        pid, session, group = map(int, where.read_text().split())
        assert session == pid == group and session != os.getsid(0)

    @pytest.mark.skipif(not available(), reason="no PID namespace can be made here")
    def test_a_scenario_runs_in_a_pid_namespace_of_its_own(self, tmp_path: Path) -> None:
        """Its process is number 2 there, its parent the namespace's first process (1), and the numbers of the
        run, of the test and of every other worker name nothing it can signal."""
        where = tmp_path / "ids"
        (tmp_path / "mine.py").write_text(SESSION.format(where=str(where)), encoding="utf-8")
        (outcome,) = run_files([Job(tmp_path / "mine.py", 5.0)])
        assert getattr(outcome, "verdict", None) == "PASS", outcome
        pid, session, group = map(int, where.read_text().split())
        assert (pid, session, group) == (2, 2, 2)


NOBODY = 65534
AS_NOBODY = """import os, sys
sys.path.insert(0, sys.argv[1])
from worker_namespace import available, contain
pid = os.fork()
if pid == 0:
    os._exit(contain(lambda: 0 if (os.getpid(), os.getppid(), os.getuid()) == (2, 1, {nobody}) else 9))
print(available(), os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]))
"""


@pytest.mark.skipif(
    not available() or os.geteuid() != 0 or shutil.which("setpriv") is None,
    reason="needs a PID namespace, root and setpriv (to become another user)",
)
@pytest.mark.timeout(60)
def test_without_root_the_namespace_is_made_through_a_user_namespace() -> None:
    """A user who is not root cannot make a PID namespace directly: the worker makes a user namespace that maps
    its user to itself first. Tried as ``nobody`` (where the kernel refuses unprivileged user namespaces, the
    worker runs its scenario itself, and this test says so)."""
    folder = Path(tempfile.mkdtemp(prefix="lab-nobody-"))
    try:
        folder.chmod(0o755)
        module = Path(worker_namespace.__file__)
        shutil.copyfile(module, folder / module.name)
        done = subprocess.run(
            [
                "setpriv",
                f"--reuid={NOBODY}",
                f"--regid={NOBODY}",
                "--clear-groups",
                sys.executable,
                "-I",
                "-c",
                AS_NOBODY.format(nobody=NOBODY),
                str(folder),
            ],
            capture_output=True,
            text=True,
            timeout=30,
            check=False,
            cwd=folder,
        )
    finally:
        shutil.rmtree(folder)
    if done.stdout.split() == ["False", "9"]:
        pytest.skip("this kernel allows no unprivileged user namespaces")
    assert done.stdout.split() == ["True", "0"], done.stdout + done.stderr


SLOW = SESSION.replace(
    "A scenario that reports its own session and process group.", "A scenario that takes a moment."
).replace(
    'with open({where!r}, "w") as handle:\n    handle.write(f"{{os.getpid()}} {{os.getsid(0)}} {{os.getpgid(0)}}")',
    "import time\n\ntime.sleep(0.5)",
)


@pytest.mark.skipif(not available(), reason="without a PID namespace, what the caller starts during a run is swept")
@pytest.mark.timeout(60)
def test_a_process_the_caller_starts_during_a_run_is_left_alone(tmp_path: Path) -> None:
    """The sweep of what workers left took every child of the caller that was not there when the run began: a
    PostgreSQL server a test session started in a thread meanwhile was killed, and a later test found its port
    closed. In PID namespaces there is nothing to sweep, and nothing of the caller's is touched."""
    assert "sleep" in SLOW
    (tmp_path / "slow.py").write_text(SLOW, encoding="utf-8")
    started: list[subprocess.Popen[bytes]] = []

    def start() -> None:
        time.sleep(0.1)
        started.append(subprocess.Popen(["sleep", "30"]))

    meanwhile = threading.Thread(target=start)
    meanwhile.start()
    try:
        (outcome,) = run_files([Job(tmp_path / "slow.py", 5.0)])
        meanwhile.join()
        assert getattr(outcome, "verdict", None) == "PASS", outcome
        assert started[0].poll() is None, "the caller's own process was killed by the run"
    finally:
        meanwhile.join()
        for process in started:
            process.kill()
            process.wait()


@pytest.mark.timeout(60)
def test_an_interrupted_run_stops_its_running_workers_at_once(tmp_path: Path) -> None:
    """Ctrl-C while workers run: each is stopped at once, not waited for (an earlier version gave each running
    worker 2 s to end). Only a worker whose pipes closed is given a moment to end on its own."""
    sleeper = SLOW.replace("time.sleep(0.5)", "time.sleep(30)")
    (tmp_path / "a_quick.py").write_text(SESSION.format(where=str(tmp_path / "ids")), encoding="utf-8")
    for name in ("b_sleeps", "c_sleeps"):
        (tmp_path / f"{name}.py").write_text(sleeper, encoding="utf-8")
    seen: list[set[int]] = []

    before = set(children())

    def interrupt(index: int, ran: object) -> None:
        seen.append({pid for pid in set(children()) - before if os.getsid(pid) == pid})  # the sleepers' workers
        raise KeyboardInterrupt

    jobs = [Job(tmp_path / f"{name}.py", 5.0) for name in ("a_quick", "b_sleeps", "c_sleeps")]
    began = time.monotonic()
    with pytest.raises(KeyboardInterrupt):
        run_files(jobs, parallel=3, on_done=interrupt)
    assert time.monotonic() - began < 20, "the interrupted run waited for its sleeping scenarios"
    assert seen and seen[0] and not any(_alive(pid) for pid in seen[0])


SCRATCH = '''"""A scenario whose setup makes a scratch database, and says where."""

from pathlib import Path

from lab import Scenario, actor, only, scratch_database


class Scratch(Scenario):
    source = "tests"
    outcomes = only(a="DONE")

    def setup(self) -> None:
        Path({where!r}).write_text(str(scratch_database("scratch")), encoding="utf-8")

    @actor
    def a(self) -> object:
        return "DONE"
'''


@pytest.mark.timeout(60)
def test_a_workers_scratch_databases_do_not_outlive_the_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A worker ends with os._exit, which runs no atexit: each worker whose scenario made a scratch database left
    its folder behind in /dev/shm (890 of them, 117 MB of memory, after a day of runs). Now the workers' scratch
    folders are under one the run makes and removes."""
    from lab.sessions.stores import SCRATCH_VARIABLE

    monkeypatch.setenv(SCRATCH_VARIABLE, str(tmp_path / "base"))  # where this process's scratch would go
    (tmp_path / "base").mkdir()
    where = tmp_path / "where"
    (tmp_path / "scratch.py").write_text(SCRATCH.format(where=str(where)), encoding="utf-8")
    (outcome,) = run_files([Job(tmp_path / "scratch.py", 5.0)])
    assert getattr(outcome, "verdict", None) == "PASS", outcome
    made = Path(where.read_text(encoding="utf-8"))
    assert not made.exists() and not made.parent.exists()
    assert list((tmp_path / "base").iterdir()) == []


def _failing_fork(monkeypatch: pytest.MonkeyPatch, fails: set[int]) -> None:
    """Make the calling process's forks numbered in ``fails`` (from 1) fail as a fork bomb makes them fail."""
    real, parent, count = os.fork, os.getpid(), [0]

    def fork() -> int:
        if os.getpid() == parent:
            count[0] += 1
            if count[0] in fails:
                raise BlockingIOError(11, "Resource temporarily unavailable")
        return real()

    monkeypatch.setattr(os, "fork", fork)


@pytest.mark.timeout(60)
def test_a_worker_that_cannot_be_forked_waits_for_a_running_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A scenario's fork bomb takes every process the machine has: the run's next fork failed, and the exception
    ended the run. Now the job waits until a running worker ends (the bomb's, at the latest, ends with its
    namespace), or a moment when none runs, and only a job that could not be started within that moment is ERROR,
    with the reason."""
    for name in ("a", "b", "c"):
        (tmp_path / f"{name}.py").write_text(SLOW, encoding="utf-8")
    _failing_fork(monkeypatch, {3, 4})  # 1: the namespace probe or a's worker; then b's or c's, twice
    outcomes = run_files([Job(tmp_path / f"{name}.py", 5.0) for name in ("a", "b", "c")], parallel=2)
    assert [getattr(o, "verdict", None) for o in outcomes] == ["PASS", "PASS", "PASS"], outcomes


@pytest.mark.timeout(60)
def test_a_run_that_can_fork_nothing_records_why(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from lab.evidence.reexecute import isolation

    (tmp_path / "a.py").write_text(SLOW, encoding="utf-8")
    available()  # the namespace probe forks too: not the fork this test refuses
    monkeypatch.setattr(isolation, "FORK_PATIENCE", 0.2)
    _failing_fork(monkeypatch, set(range(1, 1000)))
    (outcome,) = run_files([Job(tmp_path / "a.py", 5.0)])
    assert getattr(outcome, "verdict", None) == "ERROR"
    assert outcome.problem == "its worker could not be started: Resource temporarily unavailable"
