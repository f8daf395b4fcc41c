"""`run-repl mcp`: AI agents run snippets through the Model Context Protocol, and a
person approves their sensitive calls in run-repl.

    run-repl mcp                     # stdio (what an MCP client's config starts)
    run-repl mcp --http 8000         # streamable HTTP on 127.0.0.1:8000/mcp

Tools: `run` (the run envelope, and `to_tool_output`'s words), `expand_result`,
`docs` (the host as TypeScript), `approval_status`. A run that reaches a call
needing approval waits (`--approval-wait`) for a person's decision in any run-repl
process, and returns the final result; the server follows the run through the
store and never resumes it itself (see `approval_wait`).
"""

from __future__ import annotations

from .server import McpOptions, RunReplMcp, bind, serve_http, serve_stdio, started_line

__all__ = ["McpOptions", "RunReplMcp", "bind", "serve_http", "serve_stdio", "started_line"]
