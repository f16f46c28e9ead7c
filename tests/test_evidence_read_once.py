"""An audit reads each file once (issue 23, point 3): the bytes it hashes are the bytes it parses and compares, and
a file changed on disk after it was read is never read again, only named."""

from __future__ import annotations

import builtins
import hashlib
import io
import json
import os
import shutil
import stat
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console

import lab.evidence.verify.auditor as auditor
from lab.evidence.records.safefs import FolderReader
from lab.evidence.verify import audit
from tests.evidence_checkout import frozen_checkout, run

SCENARIOS = ("out_of_order_commit", "abba_deadlock")
RESULT = "scenarios/out_of_order_commit/result.json"


@pytest.fixture(scope="module")
def written(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("read-once") / "ev"
    with frozen_checkout():
        words = ["--out", str(out)] + [word for name in SCENARIOS for word in ("--scenario", name)]
        assert run.main(words, console=Console(file=io.StringIO())) == 0
    return out


@pytest.fixture
def folder(written: Path, tmp_path: Path) -> Iterator[Path]:
    copy = Path(shutil.copytree(written, tmp_path / "ev"))
    with frozen_checkout():
        yield copy


def _opened_files(folder: Path, patch: pytest.MonkeyPatch) -> Counter[str]:
    """Every regular file inside ``folder`` opened from now on, by relative path, however it is opened (``os.open``
    with or without a directory descriptor, ``open``, ``io.open``, ``Path.read_bytes``)."""
    root = os.path.realpath(folder)
    seen: Counter[str] = Counter()

    def note(fd: int) -> None:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return
        where = os.readlink(f"/proc/self/fd/{fd}")
        if where.startswith(root + os.sep):
            seen[where[len(root) + 1 :]] += 1

    real_os_open = os.open

    def os_open(path: Any, flags: int, mode: int = 0o777, *, dir_fd: int | None = None) -> int:
        fd = real_os_open(path, flags, mode, dir_fd=dir_fd)
        note(fd)
        return fd

    def wrap(real: Callable[..., Any]) -> Callable[..., Any]:
        def opened(*args: Any, **kwargs: Any) -> Any:
            handle = real(*args, **kwargs)
            if hasattr(handle, "fileno"):
                note(handle.fileno())
            return handle

        return opened

    patch.setattr(os, "open", os_open)
    patch.setattr(builtins, "open", wrap(builtins.open))
    patch.setattr(io, "open", wrap(io.open))
    return seen


def test_an_audit_opens_each_file_of_the_folder_once(folder: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The whole audit, re-execution and the check of the archived sources included: every file it reads, it
    opens once (before, each record was opened to be hashed, then again to be parsed, and the archive up to four
    times)."""
    seen = _opened_files(folder, monkeypatch)
    report = audit(folder)
    monkeypatch.undo()
    assert report.ok, report.problems
    listed = {line.split("  ", 1)[1] for line in (folder / "SHA256SUMS").read_text(encoding="utf-8").splitlines()}
    assert listed | {"SHA256SUMS"} <= set(seen), "the audit did not read every file it verified"
    assert [rel for rel, times in seen.items() if times > 1] == []


def test_the_folder_reader_serves_every_later_read_from_the_bytes_it_hashed(tmp_path: Path) -> None:
    """A hash, then a read, of one file: one open, and the read returns the hashed bytes even after the file was
    replaced; the replacement is named by ``changed()``; what could not be read is refused the same way twice."""
    (tmp_path / "a.json").write_bytes(b'{"a": 1}\n')
    (tmp_path / "link").symlink_to("a.json")
    with FolderReader(tmp_path) as reader:
        digest = reader.sha256("a.json")
        (tmp_path / "b.json").write_bytes(b'{"a": 2}\n')
        os.replace(tmp_path / "b.json", tmp_path / "a.json")
        assert hashlib.sha256(reader.read("a.json", 1 << 20)).hexdigest() == digest
        assert reader.read("a.json", 1 << 20) == b'{"a": 1}\n'
        assert reader.changed() == ["a.json"]
        first = [str(_refusal(reader, "link")) for _ in range(2)]
        assert first[0] == first[1] and "symbolic link" in first[0]
        assert reader.held() == {"a.json", "link"}


def _refusal(reader: FolderReader, rel: str) -> Exception:
    try:
        reader.read(rel, 1 << 20)
    except Exception as error:
        return error
    raise AssertionError(f"{rel} was read")


def _forged(folder: Path) -> None:
    """``result.json`` replaced by another record, and ``SHA256SUMS`` summed again over it: a folder that would
    audit OK if the audit read it afresh, but names a verdict the scenario never had."""
    path = folder / RESULT
    record = json.loads(path.read_bytes())
    record["lesson"] = record["lesson"] + " (forged)"
    replacement = folder / "result.tmp"
    replacement.write_bytes(json.dumps(record, indent=2, sort_keys=True, ensure_ascii=False).encode() + b"\n")
    os.replace(replacement, path)
    sums = folder / "SHA256SUMS"
    lines = []
    for line in sums.read_text(encoding="utf-8").splitlines():
        digest, rel = line.split("  ", 1)
        if rel == RESULT:
            digest = hashlib.sha256(path.read_bytes()).hexdigest()
        lines.append(f"{digest}  {rel}\n")
    sums.write_text("".join(lines), encoding="utf-8")


def test_a_record_swapped_after_its_hash_check_is_not_used(folder: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``result.json`` and ``SHA256SUMS`` swapped the moment the record's hash was checked: the audit parses the
    bytes it hashed (no problem of the forged record's content), and names both files as changed on disk."""
    real = FolderReader.sha256

    def sha256(reader: FolderReader, rel: str, cap: int = 64 << 20) -> str:
        digest = real(reader, rel, cap)
        if rel == RESULT:
            _forged(folder)
        return digest

    monkeypatch.setattr(FolderReader, "sha256", sha256)
    report = audit(folder, rerun=False)
    assert {(p.file, "changed on disk" in p.reason) for p in report.problems} == {
        (RESULT, True),
        ("SHA256SUMS", True),
    }, report.problems


def test_a_record_swapped_while_re_execution_runs_fails_the_audit(
    folder: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The race of issue 23: a ``result.json`` replaced, and re-summed, while the scenarios were re-executed audited
    OK (the audit then checked only names). Now the audit judges the bytes it read, and names what changed."""
    real = auditor.reexecute

    def reexecute(*args: Any, **kwargs: Any) -> Any:
        _forged(folder)
        return real(*args, **kwargs)

    monkeypatch.setattr(auditor, "reexecute", reexecute)
    report = audit(folder)
    assert not report.ok
    assert {p.file for p in report.problems} == {RESULT, "SHA256SUMS"}, report.problems
    assert report.rerun.status == "MATCHED"  # it re-executed the record it read, which was the honest one
