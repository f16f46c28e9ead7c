"""Signatures: run.py --sign KEYFILE writes SHA256SUMS.sig with ssh-keygen -Y sign; audit.py --allowed-signers FILE
verifies it with ssh-keygen -Y verify. The keys are throwaway ones, made here."""

from __future__ import annotations

import hashlib
import io
import json
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console

from lab.evidence.records.signing import NAMESPACE
from tests.evidence_checkout import frozen_checkout

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import audit as audit_command  # noqa: E402  (audit.py and run.py live at the repository root)
import run  # noqa: E402

pytestmark = pytest.mark.skipif(shutil.which("ssh-keygen") is None, reason="OpenSSH's ssh-keygen is not installed")
SCENARIO = "out_of_order_commit"


@pytest.fixture(scope="module", autouse=True)
def _frozen() -> Iterator[Path]:
    """Write from, and audit against, one frozen copy of the checkout (see tests/evidence_checkout.py)."""
    with frozen_checkout() as path:
        yield path


def _key(folder: Path, who: str) -> tuple[Path, Path]:
    """A throwaway ed25519 key without passphrase, and an allowed-signers file naming ``who`` for it."""
    key = folder / who.split("@")[0]
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", who, "-f", str(key)], check=True, timeout=30)
    allowed = folder / f"{key.name}.allowed"
    allowed.write_text(f'{who} namespaces="{NAMESPACE}" {key.with_suffix(".pub").read_text().strip()}\n')
    return key, allowed


@pytest.fixture(scope="module")
def keys(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[Path, Path]]:
    folder = tmp_path_factory.mktemp("keys")
    return {who: _key(folder, f"{who}@example.org") for who in ("alice", "mallory")}


@pytest.fixture(scope="module")
def signed(tmp_path_factory: pytest.TempPathFactory, keys: dict[str, tuple[Path, Path]]) -> Path:
    """A folder signed by alice (its self-audit without re-execution: signing is what is tested here)."""
    import lab.evidence.write.writer as writer

    folder = tmp_path_factory.mktemp("signed") / "ev"
    real = writer.audit
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(writer, "audit", lambda path, **options: real(path, **{**options, "rerun": False}))
        argv = ["--out", str(folder), "--scenario", SCENARIO, "--sign", str(keys["alice"][0])]
        assert run.main(argv, console=Console(file=io.StringIO())) == 0
    return folder


@pytest.fixture()
def ev(signed: Path, tmp_path: Path) -> Path:
    return Path(shutil.copytree(signed, tmp_path / "ev"))


def _report(*args: str, capsys: pytest.CaptureFixture[str]) -> tuple[int, dict[str, Any]]:
    capsys.readouterr()
    code = audit_command.main([*args, "--no-rerun", "--json"])
    return code, json.loads(capsys.readouterr().out)


def test_a_signed_folder_verifies_with_python(
    signed: Path, keys: dict[str, tuple[Path, Path]], capsys: pytest.CaptureFixture[str]
) -> None:
    """SHA256SUMS.sig sits beside SHA256SUMS, unlisted by it; the audit names the signer."""
    assert (signed / "SHA256SUMS.sig").read_bytes().startswith(b"-----BEGIN SSH SIGNATURE-----")
    assert "SHA256SUMS.sig" not in (signed / "SHA256SUMS").read_text()
    code, report = _report(str(signed), "--allowed-signers", str(keys["alice"][1]), capsys=capsys)
    assert code == 0, report["problems"]
    assert report["signature"].startswith("SHA256SUMS signed by alice@example.org (verified with ssh-keygen")
    code, report = _report(str(signed), capsys=capsys)
    assert code == 0 and report["signature"] == "present, not verified (give --allowed-signers FILE to verify it)"


def test_a_signed_folder_verifies_without_python(signed: Path, keys: dict[str, tuple[Path, Path]]) -> None:
    """The documented command: ssh-keygen -Y verify, then sha256sum -c."""
    with open(signed / "SHA256SUMS", "rb") as sums:
        done = subprocess.run(
            ["ssh-keygen", "-Y", "verify", "-f", str(keys["alice"][1]), "-I", "alice@example.org", "-n", NAMESPACE,
             "-s", "SHA256SUMS.sig"],
            stdin=sums, cwd=signed, capture_output=True, timeout=30, check=False,
        )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert subprocess.run(["sha256sum", "-c", "--quiet", "SHA256SUMS"], cwd=signed, check=False).returncode == 0


def test_a_forger_who_recomputes_sums_breaks_the_signature(
    ev: Path, keys: dict[str, tuple[Path, Path]], capsys: pytest.CaptureFixture[str]
) -> None:
    """Edit a record, rewrite SHA256SUMS to match: every sum checks, the signature does not."""
    run_json = ev / "run.json"
    run_json.write_text(run_json.read_text().replace('"network_requests": 0', '"network_requests": 0 '))
    lines = [
        f"{hashlib.sha256(p.read_bytes()).hexdigest()}  {p.relative_to(ev).as_posix()}\n"
        for p in sorted(ev.rglob("*"))
        if p.is_file() and p.name not in {"SHA256SUMS", "SHA256SUMS.sig"}
    ]
    (ev / "SHA256SUMS").write_text("".join(lines))
    code, report = _report(str(ev), "--allowed-signers", str(keys["alice"][1]), capsys=capsys)
    assert code == 1
    assert [(p["file"], p["reason"].split(":")[0]) for p in report["problems"]] == [
        # the added space is seen twice: run.json is no longer the bytes the lab writes, and no longer signed
        ("run.json", "is not written the way the lab writes records (sorted keys, two-space indent, UTF-8, newline)"),
        ("SHA256SUMS.sig", "does not verify for alice@example.org in namespace concurrency-lab-evidence"),
    ]


def test_a_signature_by_anyone_else_is_refused(
    ev: Path, keys: dict[str, tuple[Path, Path]], capsys: pytest.CaptureFixture[str]
) -> None:
    """Mallory re-signs with her own key: alice's allowed-signers file does not know it."""
    done = subprocess.run(
        ["ssh-keygen", "-Y", "sign", "-f", str(keys["mallory"][0]), "-n", NAMESPACE],
        input=(ev / "SHA256SUMS").read_bytes(), capture_output=True, timeout=30, check=True,
    )  # fmt: skip
    (ev / "SHA256SUMS.sig").write_bytes(done.stdout)
    code, report = _report(str(ev), "--allowed-signers", str(keys["alice"][1]), capsys=capsys)
    assert code == 1 and report["problems"][0]["file"] == "SHA256SUMS.sig"
    assert report["problems"][0]["reason"].startswith("no principal in ")


def test_an_unsigned_folder_fails_when_a_signature_is_asked_for(
    ev: Path, keys: dict[str, tuple[Path, Path]], capsys: pytest.CaptureFixture[str]
) -> None:
    (ev / "SHA256SUMS.sig").unlink()
    code, report = _report(str(ev), "--allowed-signers", str(keys["alice"][1]), capsys=capsys)
    assert code == 1
    assert report["problems"][0]["file"] == "SHA256SUMS.sig"
    assert report["problems"][0]["reason"].startswith("missing: the folder is not signed")


def test_a_key_that_cannot_sign_is_refused_before_anything_is_written(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run.main(["--out", str(tmp_path / "ev"), "--sign", str(tmp_path / "nokey")]) == 2
    assert capsys.readouterr().err == f"run.py: --sign {tmp_path / 'nokey'}: not a readable private key file\n"
    assert not (tmp_path / "ev").exists()
