"""A throwaway PostgreSQL server for tests, benchmarks and lessons: started from the machine's own binaries.

``initdb`` into a new temporary folder, then ``pg_ctl start`` listening on 127.0.0.1 only, on a free port, with
trust authentication for one user (``lab``), in the database ``postgres`` that initdb makes;
:meth:`TemporaryPostgres.stop` stops the server and removes the folder. PostgreSQL refuses to run as root, so
under root the server runs as an unprivileged user: ``postgres`` where the Debian packages created it, otherwise a
system user ``labpg`` made with ``useradd``. Nothing here touches a server it did not start.

Binaries are looked up on ``PATH`` and then in ``/usr/lib/postgresql/*/bin`` (Debian's layout, newest first).
Without them :func:`find_binaries` returns ``None`` and callers skip, saying why (:data:`NO_SERVER_REASON`).

From a shell: ``python -m lab.sessions.stores.pgserver -- COMMAND ARGS...`` runs the command with a fresh server
and ``LAB_POSTGRES_URL`` set to it, then stops the server (CI runs the lessons' evidence this way). That server runs
with ``fsync``, ``synchronous_commit`` and ``full_page_writes`` off, for speed, and says so in one line
(:data:`NO_FSYNC_NOTE`): it is for tests only. :class:`TemporaryPostgres` keeps PostgreSQL's durable defaults
unless given ``fsync=False``.
"""

from __future__ import annotations

import contextlib
import os
import pwd
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

from lab.sessions.stores.store import POSTGRES_URL_VARIABLE, StoreError

NO_SERVER_REASON = (
    "no PostgreSQL server binaries (initdb, pg_ctl) on PATH or under /usr/lib/postgresql/*/bin: "
    "install the postgresql package (.ci/run does) or set LAB_POSTGRES_URL"
)
_SERVICE_USER = "labpg"
NO_FSYNC_NOTE = "note: fsync, synchronous_commit and full_page_writes are off: for tests only"
"""What ``python -m lab.sessions.stores.pgserver`` says about the server it starts: fast, and not durable (a crash
of the server may lose its last commits; a crash of the machine may corrupt it)."""


def find_binaries() -> Path | None:
    """The folder holding ``initdb`` and ``pg_ctl``, or ``None``."""
    found = shutil.which("initdb")
    if found is not None and shutil.which("pg_ctl") is not None:
        return Path(os.path.realpath(found)).parent
    candidates = sorted(
        Path("/usr/lib/postgresql").glob("*/bin/initdb"),
        key=lambda p: int(p.parent.parent.name) if p.parent.parent.name.isdigit() else 0,
    )
    for initdb in reversed(candidates):
        if (initdb.parent / "pg_ctl").exists():
            return initdb.parent
    return None


class TemporaryPostgres:
    """One PostgreSQL server in a temporary folder. Use as a context manager, or call :meth:`start`/:meth:`stop`.

    ``fsync=False`` trades crash safety for speed (tests); the default keeps PostgreSQL's durable settings.
    """

    def __init__(self, *, fsync: bool = True, max_connections: int = 100) -> None:
        self._fsync = fsync
        self._max_connections = max_connections
        self._folder: Path | None = None
        self._user: pwd.struct_passwd | None = None
        self.url = ""
        self.port = 0
        self._options = ""

    def start(self) -> str:
        """Create and start the server; returns its URL (``postgresql://lab@127.0.0.1:PORT/postgres``)."""
        binaries = find_binaries()
        if binaries is None:
            raise StoreError(NO_SERVER_REASON)
        self._user = _server_user()
        self._folder = Path(tempfile.mkdtemp(prefix="lab-postgres-"))
        data = self._folder / "data"
        if self._user is not None:
            os.chown(self._folder, self._user.pw_uid, self._user.pw_gid)
        self._run(
            [
                str(binaries / "initdb"),
                "-D",
                str(data),
                "-U",
                "lab",
                "-A",
                "trust",
                "-E",
                "UTF8",
                "--locale=C",
                "--no-sync",
                "--no-instructions",
            ]
        )
        for _attempt in range(5):
            self.port = _free_port()
            options = (
                f"-p {self.port} -c listen_addresses=127.0.0.1 -c unix_socket_directories={self._folder}"
                f" -c max_connections={self._max_connections}"
                + ("" if self._fsync else " -c fsync=off -c synchronous_commit=off -c full_page_writes=off")
            )
            self._options = options
            started = self._run(
                [
                    str(binaries / "pg_ctl"),
                    "-D",
                    str(data),
                    "-o",
                    options,
                    "-l",
                    str(self._folder / "server.log"),
                    "-w",
                    "-t",
                    "30",
                    "start",
                ],
                check=False,
            )
            if started.returncode == 0:
                break
        else:
            log = (self._folder / "server.log").read_text(errors="replace")[-2000:]
            self.stop()
            raise StoreError(f"PostgreSQL did not start: {log.strip().splitlines()[-1] if log.strip() else '?'}")
        self.url = f"postgresql://lab@127.0.0.1:{self.port}/postgres"
        return self.url

    def restart(self) -> None:
        """Stop the server (fast shutdown: every connection is closed) and start it again on the same port and
        data: what a live store sees when its server restarts."""
        binaries = find_binaries()
        if self._folder is None or binaries is None:
            raise StoreError("the server is not running")
        data = str(self._folder / "data")
        self._run([str(binaries / "pg_ctl"), "-D", data, "-m", "fast", "-w", "stop"])
        log = str(self._folder / "server.log")
        self._run([str(binaries / "pg_ctl"), "-D", data, "-o", self._options, "-l", log, "-w", "-t", "30", "start"])

    def stop(self) -> None:
        """Stop the server (fast shutdown) and remove its folder. Safe to call twice."""
        folder, self._folder = self._folder, None
        if folder is None:
            return
        binaries = find_binaries()
        if binaries is not None and (folder / "data" / "postmaster.pid").exists():
            self._run([str(binaries / "pg_ctl"), "-D", str(folder / "data"), "-m", "fast", "-w", "stop"], check=False)
        shutil.rmtree(folder, ignore_errors=True)

    def _run(self, command: list[str], *, check: bool = True) -> subprocess.CompletedProcess[str]:
        user = self._user
        done = subprocess.run(
            command,
            capture_output=True,
            text=True,
            check=False,
            timeout=120,
            user=user.pw_uid if user is not None else None,
            group=user.pw_gid if user is not None else None,
            extra_groups=[] if user is not None else None,
            cwd=str(self._folder) if self._folder is not None else None,
        )
        if check and done.returncode != 0:
            message = (done.stderr or done.stdout).strip().splitlines()
            raise StoreError(f"{Path(command[0]).name} failed: {message[-1] if message else done.returncode}")
        return done

    def __enter__(self) -> TemporaryPostgres:
        self.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.stop()


def _server_user() -> pwd.struct_passwd | None:
    """``None`` when not root; otherwise an unprivileged user to run the server as (created if need be)."""
    if os.geteuid() != 0:
        return None
    for name in ("postgres", _SERVICE_USER):
        with contextlib.suppress(KeyError):
            return pwd.getpwnam(name)
    made = subprocess.run(
        ["useradd", "--system", "--no-create-home", "--shell", "/usr/sbin/nologin", _SERVICE_USER],
        capture_output=True,
        text=True,
        check=False,
    )
    try:
        return pwd.getpwnam(_SERVICE_USER)
    except KeyError:
        raise StoreError(
            f"PostgreSQL refuses to run as root and no user could be made: {made.stderr.strip()}"
        ) from None


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@contextlib.contextmanager
def temporary_postgres(*, fsync: bool = True) -> Iterator[str]:
    """A server for the length of a ``with`` block; yields its URL."""
    server = TemporaryPostgres(fsync=fsync)
    try:
        yield server.start()
    finally:
        server.stop()


def main(argv: list[str]) -> int:
    """``-- COMMAND...``: run COMMAND with ``LAB_POSTGRES_URL`` naming a fresh server; returns its exit code."""
    command = argv[1:] if argv[:1] == ["--"] else argv
    if not command:
        print("usage: python -m lab.sessions.stores.pgserver -- COMMAND [ARGS...]", file=sys.stderr)
        return 2
    if find_binaries() is None:
        print(f"note: {NO_SERVER_REASON}; running without one", file=sys.stderr)
        return subprocess.run(command, check=False).returncode
    begun = time.perf_counter()
    with temporary_postgres(fsync=False) as url:
        print(
            f"PostgreSQL for this command: {url} (started in {time.perf_counter() - begun:.1f} s)",
            file=sys.stderr,
            flush=True,
        )
        print(NO_FSYNC_NOTE, file=sys.stderr, flush=True)
        return subprocess.run(command, check=False, env={**os.environ, POSTGRES_URL_VARIABLE: url}).returncode


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
