"""psycopg is imported only where a scenario may use PostgreSQL, and then before its run (it binds threading.Lock)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from lab.sessions.stores import POSTGRES_URL_VARIABLE
from lab.sessions.stores.pgsql import available

ROOT = Path(__file__).resolve().parent.parent

pytestmark = pytest.mark.skipif(not available(), reason="psycopg is not installed")


def _imports_psycopg(code: str, **env: str) -> bool:
    done = subprocess.run(
        [sys.executable, "-c", f"import sys\n{code}\nprint('psycopg' in sys.modules)"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
        env={**{k: v for k, v in os.environ.items() if k != POSTGRES_URL_VARIABLE}, **env},
    )
    return done.stdout.strip() == "True"


def test_the_lab_and_its_commands_do_not_import_psycopg() -> None:
    assert not _imports_psycopg("import lab, lab.cli, lab.campaign, lab.evidence.verify.auditor")


def test_from_lab_import_postgres_store_still_works() -> None:
    assert _imports_psycopg(
        "from lab import PostgresStore\nfrom lab.sessions.stores import PostgresStore as P\nassert P is PostgresStore"
    )


def test_a_scenario_naming_postgresql_gets_the_driver_before_its_run(tmp_path: Path) -> None:
    named = tmp_path / "uses_pg.py"
    named.write_text('"""Opens a PostgreSQL store inside an actor."""\n', encoding="utf-8")
    plain = tmp_path / "plain.py"
    plain.write_text('"""Memory only."""\n', encoding="utf-8")
    prepare = "from pathlib import Path\nfrom lab.evidence.reexecute.drivers import prepare_drivers\n"
    assert not _imports_psycopg(f"{prepare}prepare_drivers(Path({str(plain)!r}))")
    assert _imports_psycopg(f"{prepare}prepare_drivers(Path({str(named)!r}))")


def test_a_missing_file_is_no_reason_to_fail(tmp_path: Path) -> None:
    prepare = "from pathlib import Path\nfrom lab.evidence.reexecute.drivers import prepare_drivers\n"
    assert not _imports_psycopg(f"{prepare}prepare_drivers(Path({str(tmp_path / 'gone.py')!r}))")


def test_a_lesson_that_is_skipped_without_a_server_does_not_pay_for_the_driver(tmp_path: Path) -> None:
    """A lesson that reaches its server only through lesson_postgres_url() is SKIPPED in setup when none is
    configured: its workers imported psycopg for nothing (0.1 to 0.25 s each, a run's and its self-audit's). With a
    server configured, or a URL of its own in the file, it gets the driver before its run as before."""
    lesson = tmp_path / "lesson.py"
    lesson.write_text('"""On PostgreSQL."""\nfrom lab import lesson_postgres_url\n', encoding="utf-8")
    own = tmp_path / "own.py"
    own.write_text('"""On PostgreSQL."""\nURL = "postgresql://lab@127.0.0.1/lab"  # lesson_postgres_url aside\n')
    prepare = "from pathlib import Path\nfrom lab.evidence.reexecute.drivers import prepare_drivers\n"
    assert not _imports_psycopg(f"{prepare}prepare_drivers(Path({str(lesson)!r}))")
    url = {POSTGRES_URL_VARIABLE: "postgresql://lab@127.0.0.1:1/lab"}
    assert _imports_psycopg(f"{prepare}prepare_drivers(Path({str(lesson)!r}))", **url)
    assert _imports_psycopg(f"{prepare}prepare_drivers(Path({str(own)!r}))")


def test_the_shipped_postgresql_lesson_imports_no_driver_when_it_is_skipped() -> None:
    """Loading row_lock_wait, the one lesson on PostgreSQL, imports no psycopg: it imports the store in setup, once
    lesson_postgres_url() has found a server."""
    code = (
        "from pathlib import Path\nfrom lab.scenarios.loader import load\n"
        "from lab.evidence.reexecute.drivers import prepare_drivers\n"
        "path = Path('scenarios/row_lock_wait.py')\nassert load(path).cls\nprepare_drivers(path)"
    )
    assert not _imports_psycopg(code)
