"""``--execute-archive`` runs the archive's code where it cannot see the auditor's processes (issue 23, point 2):
a PID namespace of its own, where one can be made; where not, the audit's note says plainly that it could."""

from __future__ import annotations

import importlib
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import lab.evidence.reexecute.namespace as namespace
from lab.evidence.reexecute.child import Code, Finished, run_child

rerun_module = importlib.import_module("lab.evidence.reexecute.rerun")

LOOK = (
    "    auditor = json.loads(sys.stdin.read())['auditor']\n"
    "    seen = os.path.exists(f'/proc/{auditor}/environ')\n"
    "    print(json.dumps({'seen': seen, 'processes': sorted(int(p) for p in os.listdir('/proc') if p.isdigit())}))"
)


def _stand_in(tmp_path: Path) -> Code:
    """A stand-in archive whose re-execution only looks for the auditor in /proc."""
    package = tmp_path / "src" / "lab" / "evidence"
    package.mkdir(parents=True)
    for folder in (package, package.parent):
        (folder / "__init__.py").write_text("")
    (package / "rerun.py").write_text(f"import os, sys, json\n\ndef main():\n{LOOK}\n    return 0\n")
    return Code(tmp_path / "src", sandboxed=True, label="stand-in")


def _look(tmp_path: Path) -> dict[str, object]:
    request = json.dumps({"auditor": os.getpid()}).encode()
    done = run_child(_stand_in(tmp_path), request, 20.0, sys.executable)
    assert isinstance(done, Finished), done
    seen: dict[str, object] = json.loads(done.stdout)
    return seen


@pytest.mark.timeout(60)
def test_the_archive_cannot_see_the_auditor_in_a_pid_namespace(tmp_path: Path) -> None:
    """Where a PID namespace can be made, the auditor is not in the archive's /proc: only its own few processes."""
    if not namespace.pid_namespace():
        pytest.skip("no PID namespace can be made here (the next test covers what the audit says then)")
    seen = _look(tmp_path)
    assert seen["seen"] is False
    # the waiting shell (1) and the interpreter (2, or 3 after the shell's mount of a /dev/shm of its own): nothing
    # of the auditor's
    assert len(seen["processes"]) == 2 and seen["processes"][0] == 1 and seen["processes"][1] <= 3


@pytest.mark.timeout(60)
def test_where_no_namespace_can_be_made_the_audit_says_so(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Without a namespace the archive sees the auditor (as before), and the re-execution's note says so."""
    monkeypatch.setattr(namespace, "pid_namespace", lambda: ())
    monkeypatch.setattr(rerun_module, "pid_namespace", lambda: ())
    assert _look(tmp_path)["seen"] is True
    made_up = rerun_module.Expected("x", None, "0" * 64, None, {}, "PASS", "FINISHED")
    summary, _, _ = rerun_module.rerun(_stand_in(tmp_path / "again"), [made_up])
    assert summary.note.endswith(f"the archived code ran {namespace.EXPOSED}")


def test_a_signal_reported_by_the_waiting_shell_is_the_signal() -> None:
    """The namespace's shell reports a signal as 128 plus its number; the audit names the signal."""
    assert namespace.exit_code(128 + 24, namespaced=True) == -24  # SIGXCPU: the CPU limit
    assert namespace.exit_code(128 + 24, namespaced=False) == 152
    assert namespace.exit_code(1, namespaced=True) == 1


@pytest.mark.timeout(60)
def test_the_archive_has_a_dev_shm_of_its_own() -> None:
    """Archived code writes its scratch databases in /dev/shm, and code of an earlier day left them there (each
    audit --execute-archive of CI's two committed archives left six folders). In the namespace, /dev/shm is a tmpfs
    of its own, gone with it."""
    prefix = namespace.pid_namespace()
    if not prefix or not Path("/dev/shm").is_dir():
        pytest.skip("no PID namespace can be made here, or no /dev/shm")
    marker = f"lab-test-{os.getpid()}"
    done = subprocess.run(
        [*prefix, sys.executable, "-c", f"open('/dev/shm/{marker}', 'w').write('x'); print('made')"],
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )
    assert done.stdout.strip() == "made", done.stderr
    assert not Path("/dev/shm", marker).exists()
