"""Shared fixtures: one throwaway PostgreSQL server per test session, for the tests that ask for it.

The server is started from the machine's binaries (see :mod:`lab.sessions.stores.pgserver`) as soon as collection
shows that a selected test needs it, in a background thread, so that its ~1.5 s of ``initdb`` overlaps the tests
that run first; it is stopped and its folder removed when the session ends. Without binaries or without psycopg the
tests that need it are skipped, saying why, in one line of the skip summary for all of them (pytest would name
each test's line, fifty lines of one reason). No test uses a server it did not start.
"""

from __future__ import annotations

import threading
from collections.abc import Generator, Iterator
from pathlib import Path

import pytest

from lab.sessions.stores import postgres
from lab.sessions.stores.pgserver import NO_SERVER_REASON, TemporaryPostgres, find_binaries

_server = TemporaryPostgres(fsync=False)
_started: dict[str, object] = {}
_starter: threading.Thread | None = None
_SKIP_LINE = next(
    number
    for number, text in enumerate(Path(__file__).read_text(encoding="utf-8").splitlines(), start=1)
    if text.strip().startswith("pytest.skip(reason)")
)
"""The line of the fixture's skip, where the skip summary names every test skipped for want of a server."""


def _unavailable() -> str:
    if not postgres.available():
        return "psycopg 3 is not installed (pip install -e '.[test]')"
    if find_binaries() is None:
        return NO_SERVER_REASON
    return ""


def _start() -> None:
    try:
        _started["url"] = _server.start()
    except Exception as error:  # reported by the fixture, in the test that needs the server
        _started["error"] = f"{type(error).__name__}: {error}"


@pytest.hookimpl(trylast=True)  # after -m and -k have deselected what will not run
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Start the server early, in the background, if any selected test needs it."""
    global _starter
    if _unavailable() or not any("postgres_url" in getattr(item, "fixturenames", ()) for item in items):
        return
    _starter = threading.Thread(target=_start, name="start-postgres", daemon=True)
    _starter.start()


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    """A test skipped for want of the server is reported at the fixture's skip, not its own line, so that ``-rs``
    folds them all into one line with their count."""
    report = yield
    if report.skipped and call.when == "setup" and isinstance(report.longrepr, tuple):
        _, _, said = report.longrepr
        reason = _unavailable()
        if reason and said == f"Skipped: {reason}":
            report.longrepr = (str(Path(__file__)), _SKIP_LINE, said)
    return report


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """Stop the server and remove its folder."""
    if _starter is not None:
        _starter.join(timeout=60)
    _server.stop()


@pytest.fixture(scope="session")
def postgres_url() -> Iterator[str]:
    """The URL of this session's PostgreSQL server (skips, saying why, when there can be none)."""
    reason = _unavailable()
    if reason:
        pytest.skip(reason)  # _SKIP_LINE: every test skipped here is reported at this line
    global _starter
    if _starter is None:  # asked for outside collection (a plugin, a direct call): start it now
        _starter = threading.Thread(target=_start, name="start-postgres", daemon=True)
        _starter.start()
    _starter.join(timeout=90)
    if "error" in _started:
        pytest.fail(f"the test PostgreSQL server did not start: {_started['error']}")
    yield str(_started["url"])
