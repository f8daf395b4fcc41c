"""A team store's address: which URLs name a server, and how they are shown.

    is_server_url("postgresql://alice@db.internal/runrepl")   # True
    mask("postgresql://alice:s3cret@db/runrepl")  # 'postgresql://alice:***@db/runrepl'
    scrub("... s3cret ...", url)                   # any text, with the password cut out

The password in a URL is never printed: every message that names a server
uses `mask`, and text that came from elsewhere (a driver's error) goes through
`scrub`. The better place for a password is libpq's own ~/.pgpass (0600) or
PGPASSWORD, so the URL holds none.
"""

from __future__ import annotations

import re
from urllib.parse import parse_qsl, unquote, urlsplit

from ..sandbox.errors import RunReplError

SCHEMES = ("postgresql", "postgres")
DEFAULT_SCHEMA = "run_repl"  # where a team store keeps its tables, unless configured
HIDDEN = "***"
# Query parameters of a libpq URL that are secrets (password, sslpassword, ...).
_SECRET_PARAM = re.compile(r"(?i)((?:^|[?&])[a-z_]*password=)([^&#]*)")


class StoreUrlError(RunReplError, ValueError):
    """A store URL that cannot name a server; the message says what one looks like."""

    code = "STORE_URL_INVALID"


def is_server_url(text: str) -> bool:
    """Whether `text` names a PostgreSQL server (postgresql:// or postgres://)."""
    scheme, sep, _ = text.strip().partition("://")
    return bool(sep) and scheme.lower() in SCHEMES


def check_url(text: str) -> str:
    """`text`, stripped, if it is a PostgreSQL URL; else StoreUrlError saying what is expected."""
    url = text.strip()
    if not is_server_url(url):
        shown = mask(url) if "://" in url else (url[:40] + "…" if len(url) > 40 else url)
        raise StoreUrlError(
            f"{shown!r} is not a store URL: expected postgresql://USER@HOST[:PORT]/DATABASE "
            "(the password, if any, in ~/.pgpass or PGPASSWORD rather than in the URL)"
        )
    return url


def _passwords(url: str) -> list[str]:
    found: list[str] = []
    try:
        parts = urlsplit(url)
        if parts.password:
            found.append(parts.password)
        for key, value in parse_qsl(parts.query, keep_blank_values=True):
            if "password" in key.lower() and value:
                found.append(value)
    except ValueError:
        pass
    # Raw (percent-encoded) forms too: the text may show either.
    raw = url.split("://", 1)[-1].split("/", 1)[0]
    if "@" in raw:
        userinfo = raw.rsplit("@", 1)[0]
        if ":" in userinfo:
            found.append(userinfo.split(":", 1)[1])
    for match in _SECRET_PARAM.finditer(url):
        if match.group(2):
            found.append(match.group(2))
    found += [unquote(p) for p in found]
    return sorted({p for p in found if p}, key=len, reverse=True)


def has_password(url: str) -> bool:
    """Whether the URL itself carries a password (or another secret parameter)."""
    return bool(_passwords(url))


def mask(url: str) -> str:
    """The URL as it may be shown: its password (and any *password= parameter) as ***."""
    head, sep, rest = url.partition("://")
    if not sep:
        return scrub(url, url)
    authority, slash, tail = rest.partition("/")
    if "@" in authority:
        userinfo, host = authority.rsplit("@", 1)
        if ":" in userinfo:
            userinfo = userinfo.split(":", 1)[0] + ":" + HIDDEN
        authority = f"{userinfo}@{host}"
    tail = _SECRET_PARAM.sub(lambda m: m.group(1) + (HIDDEN if m.group(2) else ""), tail)
    return f"{head}{sep}{authority}{slash}{tail}"


def scrub(text: str, url: str | None) -> str:
    """`text` with every form of the URL's password replaced by ***."""
    if not url:
        return text
    for secret in _passwords(url):
        text = text.replace(secret, HIDDEN)
    return text


__all__ = [
    "DEFAULT_SCHEMA",
    "StoreUrlError",
    "check_url",
    "has_password",
    "is_server_url",
    "mask",
    "scrub",
]
