"""The `run-repl mcp` command: options to McpOptions, the transport, and one line on stderr.

stdout belongs to the protocol (stdio): everything for the person (the start
line, warnings, a port that cannot be bound) goes to stderr.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from typing import Any

from ..present import ExitCode, styled
from ..present.shell import Output
from ..workspace import Workspace
from .server import McpOptions, RunReplMcp, bind, serve_http, serve_stdio, started_line

TOOL_DEFAULT_TIMEOUT_S = 60.0  # seed 000: `timeout_seconds` is 60 by default, at most 300
TOOL_MAX_TIMEOUT_S = 300.0


def options_of(ws: Workspace, args: argparse.Namespace) -> McpOptions:
    """The server's options: a timeout the person set (--timeout-ms, or `[limits]
    timeout_ms` in the config) is the tools' default; else seed 000's 60 s."""
    configured: int | None = getattr(args, "timeout_ms", None)
    if configured is None and "timeout_ms" in ws.settings.limits.model_fields_set:
        configured = ws.settings.limits.timeout_ms
    default = configured / 1000 if configured is not None else TOOL_DEFAULT_TIMEOUT_S
    return McpOptions(
        approval_wait_s=args.approval_wait,
        approve_via=args.approve_via,
        default_timeout_s=default,
        max_timeout_s=max(TOOL_MAX_TIMEOUT_S, default),
    )


def serve_command(ws: Workspace, args: argparse.Namespace, output: Output) -> int:
    app = RunReplMcp(ws, options_of(ws, args))
    if args.http is None:
        print(started_line(app, "over stdio"), file=sys.stderr, flush=True)
        asyncio.run(serve_stdio(app))
        return ExitCode.OK
    host, port = args.http
    try:
        sock = bind(host, port)
    except OSError as exc:
        output.err.line(
            styled("error", f"run-repl mcp: cannot listen on {host}:{port}: {exc.strerror or exc}")
        )
        return ExitCode.USAGE
    if host not in ("127.0.0.1", "localhost", "::1"):
        output.err.line(
            styled(
                "warn",
                f"run-repl mcp: listening on {host}, not only this machine, without "
                "authentication: anyone who reaches it can run snippets against this host.",
            )
        )

    def ready(url: str) -> Any:
        print(started_line(app, url), file=sys.stderr, flush=True)

    asyncio.run(serve_http(app, sock, on_ready=ready))
    return ExitCode.OK


__all__ = ["options_of", "serve_command"]
