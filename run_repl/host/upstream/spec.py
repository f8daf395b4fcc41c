"""What an upstream MCP server is: a command to start (stdio) or a URL (streamable HTTP).

    # config.toml
    [upstreams.git]
    command = "uvx"
    args = ["mcp-server-git"]
    env = { GIT_AUTHOR_NAME = "bot" }       # given to the process, never shown
    [upstreams.issues]
    url = "https://mcp.example.com/mcp"
    headers = { Authorization = "Bearer ..." }
    call_timeout_s = 30

    run-repl --upstream 'git=uvx mcp-server-git' --upstream 'time=mcp-server-time'

`env` and `headers` hold credentials: they reach the upstream and nothing else; the
spec's repr and every message name only their keys.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from ...sandbox.errors import RunReplError

NAME = re.compile(r"^[A-Za-z_$][A-Za-z0-9_$]*$")

DEFAULT_CALL_TIMEOUT_S = 60.0
DEFAULT_START_TIMEOUT_S = 30.0


class UpstreamSpecError(RunReplError, ValueError):
    """An upstream's settings are unusable; the message says which and what to write."""

    code = "UPSTREAM_SPEC_INVALID"


class UpstreamSpec(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str
    """The namespace its tools appear under in a snippet (`git.git_log`)."""
    command: str | None = None
    """The program that serves MCP on its stdin/stdout."""
    args: tuple[str, ...] = ()
    env: dict[str, str] = Field(default_factory=dict, repr=False)
    """Added to the process's environment (credentials go here, never in args)."""
    cwd: str | None = None
    url: str | None = None
    """A streamable HTTP endpoint, instead of a command."""
    headers: dict[str, str] = Field(default_factory=dict, repr=False)
    call_timeout_s: float = Field(DEFAULT_CALL_TIMEOUT_S, gt=0, le=3600)
    """How long one tool call may take before it is cancelled (UPSTREAM_TIMEOUT)."""
    start_timeout_s: float = Field(DEFAULT_START_TIMEOUT_S, gt=0, le=600)
    """How long starting and listing its tools may take (UPSTREAM_UNAVAILABLE)."""

    @field_validator("name")
    @classmethod
    def _identifier(cls, value: str) -> str:
        if not NAME.match(value):
            raise ValueError(
                f"{value!r} is not a JavaScript identifier: use letters, digits and _ "
                "(it becomes the namespace a snippet calls, e.g. git.git_log)"
            )
        return value

    @field_validator("url")
    @classmethod
    def _http_url(cls, value: str | None) -> str | None:
        if value is not None and not re.match(r"^https?://", value):
            raise ValueError(f"{value!r} is not an http:// or https:// URL")
        return value

    @model_validator(mode="after")
    def _one_transport(self) -> UpstreamSpec:
        if (self.command is None) == (self.url is None):
            raise ValueError("give either command (a program serving MCP on stdio) or url")
        if self.url is not None and (self.args or self.env or self.cwd):
            raise ValueError("args, env and cwd go with command, not with url")
        if self.command is not None and self.headers:
            raise ValueError("headers go with url, not with command (use env for a process)")
        return self

    @property
    def where(self) -> str:
        """The program or URL, for messages (no env, no headers)."""
        if self.url is not None:
            return self.url.split("?", 1)[0]
        return shlex.join([self.command or "", *self.args])


def _spec(name: str, table: Mapping[str, Any], origin: str) -> UpstreamSpec:
    try:
        return UpstreamSpec(name=name, **dict(table))
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first.get("loc", ())) or "its settings"
        # pydantic's own message, never the input: it may be a credential.
        raise UpstreamSpecError(
            f"{origin} upstream {name!r}: {where}: {first.get('msg', 'invalid')}"
        ) from None
    except TypeError as exc:
        raise UpstreamSpecError(f"{origin} upstream {name!r}: {exc}") from None


def parse_upstream_flag(text: str) -> UpstreamSpec:
    """`NAME=COMMAND ARGS...` (shell words) or `NAME=https://...` as one UpstreamSpec."""
    name, sep, rest = text.partition("=")
    if not sep or not name.strip() or not rest.strip():
        raise UpstreamSpecError(
            f"--upstream {text!r}: write NAME=COMMAND [ARGS...], e.g. --upstream 'git=mcp-server-git'"
        )
    name = name.strip()
    rest = rest.strip()
    if re.match(r"^https?://", rest):
        return _spec(name, {"url": rest}, "--upstream")
    try:
        words = shlex.split(rest)
    except ValueError as exc:
        raise UpstreamSpecError(f"--upstream {name}: {exc} (quote it as a shell would)") from None
    return _spec(name, {"command": words[0], "args": tuple(words[1:])}, "--upstream")


def upstreams_from_config(tables: Mapping[str, Any]) -> list[UpstreamSpec]:
    """The `[upstreams.NAME]` tables of config.toml, each checked."""
    specs = []
    for name, table in tables.items():
        if not isinstance(table, Mapping):
            raise UpstreamSpecError(
                f"config.toml upstreams.{name} is a {type(table).__name__}: make it a table "
                f"([upstreams.{name}] with command = ... or url = ...)"
            )
        specs.append(_spec(name, table, "config.toml"))
    return specs


def merge_specs(*groups: list[UpstreamSpec]) -> list[UpstreamSpec]:
    """Later groups win by name (the command line over the config)."""
    out: dict[str, UpstreamSpec] = {}
    for group in groups:
        for spec in group:
            out[spec.name] = spec
    return list(out.values())
