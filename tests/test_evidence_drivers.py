"""psycopg is imported only where a scenario may use PostgreSQL, and then before its run (it binds threading.Lock)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from lab.sessions.stores.pgsql import available

ROOT = Path(__file__).resolve().parent.parent

pytestmark = pytest.mark.skipif(not available(), reason="psycopg is not installed")


def _imports_psycopg(code: str) -> bool:
    done = subprocess.run(
        [sys.executable, "-c", f"import sys\n{code}\nprint('psycopg' in sys.modules)"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
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
