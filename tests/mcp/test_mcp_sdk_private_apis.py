"""A fence around the MCP SDK's internals the stateless --http short paths call.

run_repl/mcp/http_streams.py answers a request that asks for no progress with the
SDK's own request handling, without its per-request transport: `serve_one` (2025-11-25)
and the 2026-07-28 handler of `mcp.server._streamable_http_modern` (a private module),
under a dispatch context of its own. When the SDK moves or reshapes one of them this
fails here, by name, before a client sees a 500; test_http_short_path.py checks that
every answer is still the SDK's own.
"""

from __future__ import annotations

import importlib
import inspect

import pytest

WHERE = "run_repl/mcp/http_streams.py (ShortPath, ModernShortPath)"

CALLED = [
    (
        "mcp.server.runner",
        "serve_one",
        ["server", "dctx", "method", "params", "connection", "lifespan_state"],
    ),
    (
        "mcp.server._streamable_http_modern",
        "handle_modern_request",
        ["app", "security_settings", "json_response", "lifespan_state", "scope", "receive", "send"],
    ),
    ("mcp.shared.jsonrpc_dispatcher", "handler_exception_to_error_data", ["exc"]),
]


@pytest.mark.parametrize(("module", "name", "params"), CALLED, ids=[c[1] for c in CALLED])
def test_the_sdk_functions_the_short_paths_call_are_where_and_as_they_were(
    module: str, name: str, params: list[str]
) -> None:
    found = getattr(importlib.import_module(module), name, None)
    assert found is not None, f"the SDK moved {module}.{name}: {WHERE}"
    assert list(inspect.signature(found).parameters) == params, (
        f"the SDK changed {module}.{name}'s parameters: {WHERE}"
    )


def test_the_dispatch_context_pieces_are_where_they_were() -> None:
    from mcp.server.connection import Connection
    from mcp.shared.message import ServerMessageMetadata
    from mcp.shared.transport_context import TransportContext

    assert callable(getattr(Connection, "from_envelope", None)), (
        f"Connection.from_envelope: {WHERE}"
    )
    assert {"kind", "can_send_request"} <= set(inspect.signature(TransportContext).parameters)
    assert {"request_context", "can_send_request"} <= set(
        inspect.signature(ServerMessageMetadata).parameters
    )
