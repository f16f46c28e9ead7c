"""Optional signatures: ``SHA256SUMS.sig``, made and checked with OpenSSH's ``ssh-keygen -Y sign`` / ``-Y verify``.

``SHA256SUMS`` fingerprints every other file, so signing it ties the whole folder to whoever holds the key, and
anyone can check it with the standard tool alone, without Python or a network (docs/evidence.md, "Signatures")::

    ssh-keygen -Y verify -f allowed_signers -I alice@example.org -n concurrency-lab-evidence \\
        -s SHA256SUMS.sig < SHA256SUMS && sha256sum -c SHA256SUMS

The namespace, :data:`NAMESPACE`, keeps a signature made for this purpose from being taken for any other (a git
commit, a file signature). ``ssh-keygen`` runs with a time limit and a minimal environment; every failure is one
line.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from pathlib import Path

from lab.errors import EvidenceError, UsageError
from lab.evidence.records.layout import SIGNATURE, SUMS

NAMESPACE = "concurrency-lab-evidence"
"""The ``-n`` namespace of every signature: a signature for anything else does not verify as one of these."""
SIGNATURE_CAP = 64 << 10
"""The largest signature file the auditor reads (an ed25519 signature is about 300 bytes, RSA 4096 about 1 KiB)."""
_TIMEOUT_SECONDS = 30.0


class SigningError(EvidenceError):
    """Raised when ``ssh-keygen`` cannot sign: ``str()`` is one line; the folder is complete, but unsigned."""


def check_signing_key(key: Path) -> None:
    """Refuse, before anything is written, a key that is not a readable file or a machine without ssh-keygen."""
    if _ssh_keygen() is None:
        raise UsageError("--sign needs OpenSSH's ssh-keygen, which is not on PATH (apt-get install openssh-client)")
    if not key.is_file() or not os.access(key, os.R_OK):
        raise UsageError(f"--sign {key}: not a readable private key file")


def sign(sums: bytes, key: Path) -> bytes:
    """The SSH signature of ``sums`` (the bytes of ``SHA256SUMS``) with the private key file ``key``."""
    program = _ssh_keygen()
    if program is None:
        raise SigningError("ssh-keygen is not on PATH")
    done = _run([program, "-Y", "sign", "-f", str(key), "-n", NAMESPACE], sums)
    if isinstance(done, str) or done.returncode != 0 or not done.stdout.startswith(b"-----BEGIN SSH SIGNATURE-----"):
        raise SigningError(f"ssh-keygen -Y sign failed: {_why(done)}")
    return done.stdout


def verify(sums: bytes, signature: bytes, allowed_signers: Path) -> tuple[str, str]:
    """Who signed ``sums``, according to ``allowed_signers``: ``(principal, "")``, or ``("", one-line reason)``."""
    program = _ssh_keygen()
    if program is None:
        return "", "cannot be verified: ssh-keygen is not on PATH"
    with tempfile.TemporaryDirectory(prefix="lab-signature-") as scratch:
        sig = Path(scratch, SIGNATURE)
        sig.write_bytes(signature)
        found = _run([program, "-Y", "find-principals", "-s", str(sig), "-f", str(allowed_signers)], b"")
        if isinstance(found, str) or found.returncode != 0:
            return "", f"no principal in {allowed_signers} holds the key that made it ({_why(found)})"
        principals = [line for line in found.stdout.decode("utf-8", "replace").splitlines() if line.strip()]
        for principal in principals:
            done = _run(
                [program, "-Y", "verify", "-f", str(allowed_signers), "-I", principal, "-n", NAMESPACE, "-s", str(sig)],
                sums,
            )
            if not isinstance(done, str) and done.returncode == 0:
                return principal, ""
        return (
            "",
            f"does not verify for {', '.join(principals)} in namespace {NAMESPACE}: {SUMS} changed since "
            "it was signed, or it was signed for another purpose",
        )


def _ssh_keygen() -> str | None:
    return shutil.which("ssh-keygen")


def _run(argv: list[str], data: bytes) -> subprocess.CompletedProcess[bytes] | str:
    # SSH_AUTH_SOCK: a key held by ssh-agent signs when --sign names its public half
    env = {name: os.environ[name] for name in ("PATH", "HOME", "LANG", "LC_ALL", "SSH_AUTH_SOCK") if name in os.environ}
    try:
        return subprocess.run(argv, input=data, capture_output=True, timeout=_TIMEOUT_SECONDS, env=env, check=False)
    except subprocess.TimeoutExpired:
        return f"did not finish within {_TIMEOUT_SECONDS:g} s"
    except OSError as error:
        return f"could not start: {error.strerror or error}"


def _why(done: subprocess.CompletedProcess[bytes] | str) -> str:
    if isinstance(done, str):
        return done
    lines = [line.strip() for line in done.stderr.decode("utf-8", "replace").splitlines() if line.strip()]
    lines = [line for line in lines if not line.startswith("Signing data on standard input")]
    return lines[-1] if lines else f"exit {done.returncode}"
