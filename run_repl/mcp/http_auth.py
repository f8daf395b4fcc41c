"""Who is calling over `--http`: bearer tokens, each naming a principal.

    # ~/.config/run-repl/mcp-tokens.toml (yours alone: 0600)
    [tokens]
    alice = "sha256:9f2c..."          # `run-repl mcp --add-token alice` writes this
    ci-agent = "a-long-random-secret" # or the token itself

    RUN_REPL_MCP_TOKEN=...            # one more token, for the principal
    RUN_REPL_MCP_PRINCIPAL=agent      # named here (default "agent")

A client sends `Authorization: Bearer TOKEN`. A request without a known token
gets 401 with `WWW-Authenticate: Bearer realm="run-repl"` (RFC 6750, the
header the MCP authorization spec names; there is no OAuth authorization
server here, so no resource metadata). Tokens are compared as SHA-256 digests
in constant time, every entry every time, and never logged or kept in memory
in the clear beyond the compare.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import re
import secrets
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from starlette.types import ASGIApp, Receive, Scope, Send

from ..paths import config_dir
from ..present.files import atomic_write_text
from ..sandbox.errors import RunReplError

TOKENS_FILE = "mcp-tokens.toml"
TOKEN_ENV = "RUN_REPL_MCP_TOKEN"
PRINCIPAL_ENV = "RUN_REPL_MCP_PRINCIPAL"
DEFAULT_PRINCIPAL = "agent"
MIN_TOKEN_CHARS = 24  # a token is a secret: `--add-token` makes 43 characters
REALM = "run-repl"
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._@-]{0,99}$")
_DIGEST = re.compile(r"^sha256:[0-9a-f]{64}$")


class AuthConfigError(RunReplError):
    """The credentials cannot be used as configured; the message says what to do."""

    code = "MCP_AUTH_CONFIG_INVALID"


def default_tokens_file() -> Path:
    return config_dir() / TOKENS_FILE


def digest_of(token: str) -> bytes:
    return hashlib.sha256(token.encode("utf-8", "surrogatepass")).digest()


@dataclass(frozen=True)
class TokenTable:
    """Principal names by token digest; where they came from, for the start line."""

    entries: tuple[tuple[bytes, str], ...]
    sources: tuple[str, ...] = ()

    @property
    def principals(self) -> list[str]:
        return sorted({name for _, name in self.entries})

    def principal(self, token: str) -> str | None:
        """The principal of `token`, or None; the same work whichever entry matches."""
        presented = digest_of(token)
        found: str | None = None
        for digest, name in self.entries:
            if hmac.compare_digest(presented, digest) and found is None:
                found = name
        return found


def _check_private(path: Path) -> None:
    info = path.stat()
    mine = not hasattr(os, "getuid") or info.st_uid == os.getuid()
    if not mine:
        raise AuthConfigError(
            f"{path} belongs to another user: its tokens are not used. Make your own "
            f"(`run-repl mcp --add-token NAME --tokens-file PATH`)."
        )
    if info.st_mode & 0o077:
        raise AuthConfigError(
            f"{path} can be read or changed by others (mode {info.st_mode & 0o777:o}): its "
            f"tokens are not used. `chmod 600 {path}`."
        )


def _name(name: str, where: str) -> str:
    if not _NAME.match(name):
        raise AuthConfigError(
            f"{where}: {name!r} is not a usable principal name: letters, digits and . _ @ -, "
            "at most 100, starting with a letter or digit."
        )
    return name


def _entry(name: str, value: Any, where: str) -> tuple[bytes, str]:
    _name(name, where)
    if not isinstance(value, str):
        raise AuthConfigError(f"{where}: the token of {name!r} must be a string.")
    if _DIGEST.match(value):
        return bytes.fromhex(value.removeprefix("sha256:")), name
    if len(value) < MIN_TOKEN_CHARS:
        raise AuthConfigError(
            f"{where}: the token of {name!r} is {len(value)} characters; a token must be at "
            f"least {MIN_TOKEN_CHARS} (`run-repl mcp --add-token {name}` makes one)."
        )
    return digest_of(value), name


def load_tokens(tokens_file: Path | None, environ: Mapping[str, str] | None = None) -> TokenTable:
    """The tokens of `tokens_file` (when it exists) and of RUN_REPL_MCP_TOKEN.
    AuthConfigError for a file others can read, a bad entry, or a short token."""
    env = os.environ if environ is None else environ
    entries: list[tuple[bytes, str]] = []
    sources: list[str] = []
    if tokens_file is not None and tokens_file.exists():
        _check_private(tokens_file)
        try:
            data = tomllib.loads(tokens_file.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
            raise AuthConfigError(f"{tokens_file}: {exc}") from None
        table = data.get("tokens", {})
        if not isinstance(table, dict):
            raise AuthConfigError(f"{tokens_file}: [tokens] must be a table of NAME = TOKEN.")
        entries += [_entry(n, v, str(tokens_file)) for n, v in table.items()]
        sources.append(str(tokens_file))
    token = env.get(TOKEN_ENV)
    if token:
        name = _name(env.get(PRINCIPAL_ENV) or DEFAULT_PRINCIPAL, PRINCIPAL_ENV)
        entries.append(_entry(name, token, TOKEN_ENV))
        sources.append(TOKEN_ENV)
    return TokenTable(tuple(entries), tuple(sources))


def add_token(tokens_file: Path, name: str) -> str:
    """A new random token for `name`, kept in `tokens_file` as its digest (the file is
    made 0600, its other entries and comments kept); the token, to show once."""
    import tomlkit

    _name(name, "--add-token")
    if tokens_file.exists():
        _check_private(tokens_file)
        document = tomlkit.parse(tokens_file.read_text(encoding="utf-8"))
    else:
        document = tomlkit.document()
        document.add(tomlkit.comment("run-repl mcp --http: principal = token (or its sha256)"))
    table = document.get("tokens")
    if table is None:
        table = tomlkit.table()
        document["tokens"] = table
    token = secrets.token_urlsafe(32)
    table[name] = "sha256:" + digest_of(token).hex()
    tokens_file.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    atomic_write_text(tokens_file, tomlkit.dumps(document), mode=0o600)
    return token


def how_to_make_one(tokens_file: Path) -> str:
    return (
        f"Make a token: `run-repl mcp --add-token NAME` (keeps it in {tokens_file}, mode 0600, "
        f"and prints it once), or set {TOKEN_ENV} to a secret of {MIN_TOKEN_CHARS}+ characters "
        f"(its principal: {PRINCIPAL_ENV}, default {DEFAULT_PRINCIPAL!r}). Clients send "
        "`Authorization: Bearer TOKEN`. For a trusted setup only: --no-auth."
    )


# ---------------------------------------------------------------- the ASGI layer
def _challenge(error: str | None, description: str | None) -> bytes:
    parts = [f'realm="{REALM}"']
    if error:  # RFC 6750 3.1: no error code when the request had no credentials
        parts += [f'error="{error}"', f'error_description="{description}"']
    return ("Bearer " + ", ".join(parts)).encode()


class BearerAuth:
    """Lets an HTTP request through only with a known bearer token; puts its principal
    in `scope["user"]` (the SDK's AuthenticatedUser, so the SDK binds stateful
    sessions to it) and in the SDK's auth context."""

    def __init__(self, app: ASGIApp, tokens: TokenTable) -> None:
        self.app = app
        self.tokens = tokens

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        from mcp.server.auth.middleware.auth_context import auth_context_var
        from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser
        from mcp.server.auth.provider import AccessToken
        from starlette.authentication import AuthCredentials

        header = next((v for k, v in scope["headers"] if k == b"authorization"), None)
        text = header.decode("latin-1") if header is not None else ""
        if not text[:7].lower() == "bearer ":
            await _unauthorized(send, None, "Authentication required")
            return
        principal = self.tokens.principal(text[7:].strip())
        if principal is None:
            await _unauthorized(send, "invalid_token", "The bearer token is not known here")
            return
        user = AuthenticatedUser(AccessToken(token="", client_id=principal, scopes=[]))
        scope["user"] = user
        scope["auth"] = AuthCredentials([])
        reset = auth_context_var.set(user)
        try:
            await self.app(scope, receive, send)
        finally:
            auth_context_var.reset(reset)


async def _unauthorized(send: Send, error: str | None, description: str) -> None:
    body = json.dumps(
        {
            "error": error or "invalid_request",
            "error_description": f"{description}: send `Authorization: Bearer TOKEN` "
            "(a token from `run-repl mcp --add-token NAME`, or RUN_REPL_MCP_TOKEN).",
        }
    ).encode()
    await send(
        {
            "type": "http.response.start",
            "status": 401,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(body)).encode()),
                (b"www-authenticate", _challenge(error, description)),
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})


def principal_of(request: Any) -> str | None:
    """The authenticated principal of a tool call's HTTP request (None: stdio, --no-auth)."""
    if request is None:
        return None
    scope = getattr(request, "scope", None)
    user = scope.get("user") if isinstance(scope, dict) else None
    token = getattr(user, "access_token", None)
    name = getattr(token, "client_id", None)
    return name if isinstance(name, str) else None


__all__ = [
    "DEFAULT_PRINCIPAL",
    "PRINCIPAL_ENV",
    "TOKEN_ENV",
    "AuthConfigError",
    "BearerAuth",
    "TokenTable",
    "add_token",
    "default_tokens_file",
    "how_to_make_one",
    "load_tokens",
    "principal_of",
]
