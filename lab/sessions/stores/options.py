"""A store's settings, written in its URL: ``sqlite:chat.db?synchronous=full``, ``postgresql://...?lock_timeout=2``.

A store is named by one string wherever a person names it (``lab chat --store``, ``LAB_POSTGRES_URL``), so its
settings travel in that string's query, as ``key=value`` pairs; the constructors take the same settings as keyword
arguments. Only the keys a store knows are accepted: a misspelt key is one line naming the keys there are, never a
setting silently ignored. Timeouts are in seconds.
"""

from __future__ import annotations

import math
from collections.abc import Collection
from urllib.parse import parse_qsl

from lab.sessions.stores.store import StoreError

LOCK_TIMEOUT = 5.0
"""How long a write waits for another client's hold on the row (SQLite: on the database's write lock), in seconds."""
STATEMENT_TIMEOUT = 30.0
"""How long one PostgreSQL statement may run, in seconds."""
IDLE_TIMEOUT = 60.0
"""How long a PostgreSQL transaction may sit idle before the server ends it (a client frozen mid-commit lets go)."""


def query_options(query: str, known: Collection[str], where: str) -> dict[str, str]:
    """The ``key=value`` pairs of ``query``; a key not in ``known``, or one given twice, is a :class:`StoreError`."""
    if not query:
        return {}
    try:
        pairs = parse_qsl(query, keep_blank_values=True, strict_parsing=True)
    except ValueError:
        raise StoreError(f"{where}: the settings after '?' are not key=value pairs: {query!r}") from None
    found: dict[str, str] = {}
    for key, value in pairs:
        if key not in known:
            raise StoreError(f"{where}: unknown setting {key!r}; the settings are {', '.join(sorted(known))}")
        if key in found:
            raise StoreError(f"{where}: setting {key!r} given twice")
        found[key] = value
    return found


def seconds(value: str | float, key: str, where: str) -> float:
    """A timeout: a number of seconds greater than 0 and finite."""
    try:
        number = float(value)
    except ValueError:
        number = math.nan
    if not (number > 0 and math.isfinite(number)):
        raise StoreError(f"{where}: {key} is a number of seconds greater than 0, not {value!r}")
    return number
