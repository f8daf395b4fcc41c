"""The `run-repl mcp` command: options to McpOptions, the transport, and one line on stderr.

stdout belongs to the protocol (stdio): everything for the person (the start
line, warnings, a port that cannot be bound) goes to stderr.

Over `--http` the server needs credentials (bearer tokens: http_auth.py)
unless `--no-auth` says the setup is trusted, checks Host and Origin on every
bind (http_guard.py), and serves each request on its own (stateless), so any
server of a team answers any request; `--approve-via client` keeps sessions
in this process instead (a client's elicitation answer must come back here).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from ..present import ExitCode, line, styled
from ..present.shell import Output
from ..workspace import Workspace
from . import event_loop
from .client_approval import http_refusal
from .http_auth import (
    AuthConfigError,
    TokenTable,
    add_token,
    default_tokens_file,
    how_to_make_one,
    load_tokens,
)
from .http_guard import HttpLimits, allowed_hosts, origins_of
from .server import (
    HttpSettings,
    McpOptions,
    RunReplMcp,
    bind,
    serve_http,
    serve_stdio,
    started_line,
)

TOOL_DEFAULT_TIMEOUT_S = 60.0  # the tool's `timeout_seconds` is 60 by default, at most 300
TOOL_MAX_TIMEOUT_S = 300.0
LOOPBACK = ("127.0.0.1", "localhost", "::1")


def options_of(ws: Workspace, args: argparse.Namespace) -> McpOptions:
    """The server's options: a timeout the person set (--timeout-ms, or `[limits]
    timeout_ms` in the config) is the tools' default; else the tool's own 60 s."""
    configured: int | None = getattr(args, "timeout_ms", None)
    if configured is None and "timeout_ms" in ws.settings.limits.model_fields_set:
        configured = ws.settings.limits.timeout_ms
    default = configured / 1000 if configured is not None else TOOL_DEFAULT_TIMEOUT_S
    http = getattr(args, "http", None) is not None
    return McpOptions(
        approval_wait_s=args.approval_wait,
        approve_via=args.approve_via,
        default_timeout_s=default,
        max_timeout_s=max(TOOL_MAX_TIMEOUT_S, default),
        authenticated=http and not getattr(args, "no_auth", False),
        transport="http" if http else "stdio",
    )


def tokens_path(ws: Workspace, args: argparse.Namespace) -> Path:
    chosen = getattr(args, "tokens_file", None) or ws.settings.mcp.tokens_file
    return Path(chosen).expanduser() if chosen else default_tokens_file()


def limits_of(ws: Workspace) -> HttpLimits:
    mcp = ws.settings.mcp
    # A body must hold the largest source the runner takes, JSON-escaped.
    body = max(mcp.max_request_bytes, 2 * ws.runner.limits.max_source_bytes + 64 * 1024)
    return HttpLimits(
        header_timeout_s=mcp.header_timeout_s,
        body_timeout_s=mcp.body_timeout_s,
        keep_alive_s=mcp.keep_alive_s,
        max_connections=min(mcp.max_connections, _descriptors_to_spare()),
        max_request_bytes=body,
    )


def _descriptors_to_spare() -> int:
    """Connections this process can hold without running out of file descriptors
    (`ulimit -n`, less what the store, the workers and the rest need)."""
    try:
        import resource

        soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    except (ImportError, OSError, ValueError):
        return 1 << 30
    return (1 << 30) if soft == resource.RLIM_INFINITY else max(16, soft - 128)


def _refuse(output: Output, text: str) -> int:
    output.err.line(styled("error", f"run-repl mcp: {text}"))
    return ExitCode.USAGE


def serve_command(ws: Workspace, args: argparse.Namespace, output: Output) -> int:
    if getattr(args, "add_token", None):
        path = tokens_path(ws, args)
        try:
            token = add_token(path, args.add_token)
        except (AuthConfigError, OSError) as exc:
            return _refuse(output, str(exc))
        print(token, flush=True)  # the only copy: the file keeps its digest
        output.err.line(
            line(
                f"run-repl mcp: a token for principal {args.add_token!r} is kept in {path} (as "
                "its sha256; this is the only time it is shown). Clients send "
                "`Authorization: Bearer TOKEN` to `run-repl mcp --http`."
            )
        )
        return ExitCode.OK
    app = RunReplMcp(ws, options_of(ws, args))
    if args.http is None:
        print(started_line(app, "over stdio"), file=sys.stderr, flush=True)
        event_loop.run(serve_stdio(app))
        return ExitCode.OK
    host, port = args.http
    tokens: TokenTable | None = None
    if not args.no_auth:
        path = tokens_path(ws, args)
        try:
            tokens = load_tokens(path)
        except AuthConfigError as exc:
            return _refuse(output, str(exc))
        if not tokens.entries:
            return _refuse(
                output,
                f"--http needs credentials, and none are configured. {how_to_make_one(path)}",
            )
    if args.approve_via == "client":
        why = http_refusal(tokens.principals if tokens else [], ws.settings.approvals.deciders)
        if why is not None:
            return _refuse(output, why)
    try:
        sock = bind(host, port)
    except OSError as exc:
        return _refuse(output, f"cannot listen on {host}:{port}: {exc.strerror or exc}")
    hosts = allowed_hosts(host, [*ws.settings.mcp.allowed_hosts, *args.allow_host])
    origins = origins_of(hosts, [*ws.settings.mcp.allowed_origins, *args.allow_origin])
    http = HttpSettings(
        tokens, hosts, origins, limits_of(ws), stateless=args.approve_via != "client"
    )
    for note in _start_notes(host, http):
        output.err.line(note)

    def ready(url: str) -> Any:
        print(started_line(app, url), file=sys.stderr, flush=True)

    event_loop.run(serve_http(app, sock, http, on_ready=ready))
    return ExitCode.OK


def _start_notes(host: str, http: HttpSettings) -> list[Any]:
    notes: list[Any] = []
    if http.tokens is None:
        notes.append(
            styled(
                "warn",
                f"run-repl mcp: --no-auth: NO CREDENTIALS. Any process or user that reaches "
                f"{host} runs snippets against this host's functions and reads every run's "
                "results and approvals. Use it only where every client is trusted.",
            )
        )
    else:
        names = ", ".join(http.tokens.principals)
        notes.append(
            line(
                f"run-repl mcp: bearer tokens for {names} (from "
                f"{', '.join(http.tokens.sources)}); each principal sees only its own runs, "
                "results and approvals."
            )
        )
        if host not in LOOPBACK:
            notes.append(
                styled(
                    "warn",
                    f"run-repl mcp: listening on {host}, beyond this machine, over plain HTTP: "
                    "tokens cross the network in the clear unless a TLS proxy is in front.",
                )
            )
    notes.append(
        line(
            f"run-repl mcp: answering Host {', '.join(http.hosts)} (more with --allow-host); "
            + (
                "each request on its own (any server of a team serves any request)."
                if http.stateless
                else "sessions live in this process (--approve-via client): route each "
                "client to one server."
            )
        )
    )
    return notes


__all__ = ["limits_of", "options_of", "serve_command", "tokens_path"]
