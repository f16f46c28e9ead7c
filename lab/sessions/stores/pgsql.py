"""The PostgreSQL driver, imported once, and the piece of SQL the PostgreSQL store's modules share.

psycopg 3 is optional (``pip install 'concurrency-lab[postgres]'``); without it ``psycopg`` is ``None`` and
:func:`available` says so. It is imported here, when the store is imported: psycopg binds ``threading.Lock`` when it
is first imported, and must get the real one, not a stand-in the lab installs during a run.
"""

from __future__ import annotations

__all__ = ["RECEIPT_COUNTS", "available", "errors", "psycopg"]

try:
    import psycopg
    from psycopg import errors
except ImportError:  # pragma: no cover - exercised only where the optional dependency is missing
    psycopg = None  # type: ignore[assignment]
    errors = None  # type: ignore[assignment]


RECEIPT_COUNTS = "(SELECT max(seq) AS m, count(*) AS c, count(DISTINCT seq) AS d FROM lab_receipts WHERE session = %s)"
"""Over all of one session's receipts: the largest ``seq``, how many receipts, how many distinct ``seq``."""


def available() -> bool:
    """True when psycopg 3 is installed (``pip install 'concurrency-lab[postgres]'``)."""
    return psycopg is not None
