"""MCP servers people already run, as host functions: each upstream's tools under its name.

    specs = [UpstreamSpec(name="git", command="mcp-server-git")]
    functions = upstream_functions(specs, log_dir)   # {"git": {"git_log": fn, ...}}
    await functions["git"]["git_log"]({"repo_path": "."})

`spec` says what an upstream is (config table or `--upstream NAME=COMMAND...`),
`connection` keeps one shared client per upstream on a background loop (started on
first use, restarted with backoff), `tools` turns a tool into a host function
(its schema checked before anything is sent, its result as data, its annotations
deciding whether a person is asked), `schema_types` writes TypeScript from JSON
Schema. Imports of the `mcp` SDK stay inside `connection`, so the engine and the
host loader never pay for them unless an upstream is configured.
"""

from __future__ import annotations

from .spec import UpstreamSpec, UpstreamSpecError, parse_upstream_flag, upstreams_from_config

__all__ = ["UpstreamSpec", "UpstreamSpecError", "parse_upstream_flag", "upstreams_from_config"]
