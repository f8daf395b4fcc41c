"""Upstreams joined to a host: the functions a run gets, and the catalog that follows
the upstreams' tool lists.

    host = with_upstreams(load_host(None), specs, log_dir)    # demo + git + fs
    host = with_upstreams(None, specs, log_dir)               # the upstreams alone

Connections are shared per process by spec, so every run, the catalog and the
MCP server's docs talk to the same upstream process. A tool list that changes
(`notifications/tools/list_changed`) replaces that namespace's functions in place
and rebuilds the host's manifest, so the next run, completion and docs see it.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ...sandbox.errors import HostError
from ...sandbox.session.host_functions import HostFunctionsError, _public_callables, build_manifest
from ..loader import HostLoadError, LoadedHost
from .connection import UpstreamConnection, UpstreamLoop
from .spec import UpstreamSpec
from .tools import namespace_functions

_connections: dict[str, UpstreamConnection] = {}  # by the spec's JSON: one per upstream
_lock = threading.Lock()


def connection_for(spec: UpstreamSpec, log_dir: Path) -> UpstreamConnection:
    with _lock:
        key = spec.model_dump_json()
        conn = _connections.get(key)
        if conn is None:
            conn = UpstreamConnection(spec, log_dir / f"upstream-{spec.name}.log")
            _connections[key] = conn
        return conn


def close_all(timeout: float = 10.0) -> None:
    """Stop every upstream process this process started (tests, and exit)."""
    with _lock:
        conns = list(_connections.values())
        _connections.clear()
    if not conns:
        return

    async def close() -> None:
        await asyncio.gather(*(c.close() for c in conns), return_exceptions=True)

    UpstreamLoop.shared().run_blocking(close(), timeout)


def host_name(base: LoadedHost | None, specs: list[UpstreamSpec]) -> str:
    """What the history and approvals call this host; the same config gives the same name."""
    upstreams = "mcp:" + "+".join(sorted(s.name for s in specs))
    return upstreams if base is None else f"{base.name}+{upstreams}"


def _entries(functions: Any) -> dict[str, Any]:
    if functions is None:
        return {}
    if isinstance(functions, Mapping):
        return dict(functions)
    entries, _ = _public_callables(functions)
    return entries


def with_upstreams(base: LoadedHost | None, specs: list[UpstreamSpec], log_dir: Path) -> LoadedHost:
    """`base`'s functions and each upstream's tools under its name; raises HostLoadError
    when an upstream does not start, or its name is taken."""
    functions = _entries(base.functions if base is not None else None)
    conns = []
    for spec in specs:
        if spec.name in functions:
            raise HostLoadError(
                f"upstream {spec.name!r}: the host already has a namespace {spec.name!r}; "
                "give the upstream another name."
            )
        conns.append(connection_for(spec, log_dir))

    async def list_all() -> list[list[Any] | BaseException]:
        return await asyncio.gather(*(c.list_tools() for c in conns), return_exceptions=True)

    wait = max((s.start_timeout_s for s in specs), default=30.0) + 5
    listed = UpstreamLoop.shared().run_blocking(list_all(), wait)
    for conn, tools in zip(conns, listed, strict=True):
        if isinstance(tools, BaseException):
            why = tools.message if isinstance(tools, HostError) else str(tools)
            raise HostLoadError(f"{why} Its error output: {conn.log_path}")
        functions[conn.spec.name] = namespace_functions(conn, tools)
    try:
        manifest = build_manifest(functions)
    except HostFunctionsError as exc:
        raise HostLoadError(str(exc)) from exc
    host = LoadedHost(host_name(base, specs), functions, manifest)
    for conn in conns:
        conn.tools_changed.append(_follow(host, conn))
    return host


def _follow(host: LoadedHost, conn: UpstreamConnection) -> Any:
    def changed(tools: list[Any]) -> None:
        # One assignment each: a run building its manifest meanwhile sees the old
        # tools or the new, never a half-made namespace.
        host.functions[conn.spec.name] = namespace_functions(conn, tools)
        host.manifest = build_manifest(host.functions)
        for listener in list(host.changed):
            listener()

    return changed
