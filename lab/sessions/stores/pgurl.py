"""A PostgreSQL store's URL: the lab's settings taken out of its query, and the password kept out of sight.

``postgresql://lab@db/chat?lock_timeout=2`` names the server for the driver and carries the lab's own settings
(:data:`SETTINGS`), which libpq would refuse ("invalid URI query parameter"). A URL that does not parse is one
line that never repeats the URL, since it may hold a password; :func:`public_url` is what labels and banners show.
"""

from __future__ import annotations

from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from lab.sessions.stores.options import IDLE_TIMEOUT, LOCK_TIMEOUT, STATEMENT_TIMEOUT
from lab.sessions.stores.store import StoreError

SETTINGS = {
    "lock_timeout": ("lock_timeout", LOCK_TIMEOUT),
    "statement_timeout": ("statement_timeout", STATEMENT_TIMEOUT),
    "idle_timeout": ("idle_in_transaction_session_timeout", IDLE_TIMEOUT),
}
"""The settings a store's URL may carry: ours -> (the server's name for it, its default in seconds)."""
URL_FORM = "postgresql://USER@HOST:PORT/DB"


def public_url(url: str) -> str:
    """``url`` without its password: what a banner, a label or evidence may show."""
    parts = urlsplit(url)
    if parts.password is None:
        return url
    netloc = parts.netloc.rsplit("@", 1)
    user = (parts.username or "") + "@" if parts.username else ""
    return urlunsplit((parts.scheme, user + netloc[-1], parts.path, parts.query, parts.fragment))


def split_url(url: str) -> tuple[str, dict[str, str]]:
    """The URL to hand the driver, and the lab's own settings taken out of its query (``lock_timeout``,
    ``statement_timeout``, ``idle_timeout``); the driver's own query settings (``sslmode``...) stay. A URL that
    does not parse is one line, which never repeats the URL (it may hold a password)."""
    try:
        parts = urlsplit(url)
        _ = parts.port  # a port that is not a number is found here
    except ValueError as error:
        raise StoreError(f"the PostgreSQL URL is malformed ({error}); write it as {URL_FORM}") from None
    ours: dict[str, str] = {}
    theirs: list[tuple[str, str]] = []
    for key, value in parse_qsl(parts.query, keep_blank_values=True):
        if key in SETTINGS:
            ours[key] = value
        else:
            theirs.append((key, value))
    return urlunsplit(parts._replace(query=urlencode(theirs))), ours
