"""What the upstream tests share: the MCP servers nobody here wrote (installed by
`.ci/run`), a config.toml that names an upstream, and the environment of a run-repl
process a test starts."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).with_name("upstream_servers")))
from install import missing, program

__all__ = ["cli_env", "program", "require_servers", "write_upstream_config"]


def require_servers() -> None:
    """Fail in CI, skip elsewhere (saying how to install them), when a server is missing."""
    gone = missing()
    if gone:
        why = (
            f"upstream servers not installed ({', '.join(gone)}): "
            "python tests/host/upstream_servers/install.py"
        )
        if os.environ.get("RUN_REPL_CI"):
            pytest.fail(why)
        pytest.skip(why)


def write_upstream_config(
    config_dir: Path,
    name: str,
    command: str,
    args: Sequence[str] = (),
    env: Mapping[str, str] | None = None,
) -> None:
    """config.toml with one `[upstreams.NAME]` table (JSON strings are TOML strings)."""
    lines = [f"[upstreams.{name}]", f"command = {json.dumps(command)}"]
    if args:
        lines.append(f"args = [{', '.join(json.dumps(a) for a in args)}]")
    if env:
        pairs = ", ".join(f"{k} = {json.dumps(v)}" for k, v in env.items())
        lines.append(f"env = {{ {pairs} }}")
    config_dir.mkdir(parents=True, exist_ok=True)
    (config_dir / "config.toml").write_text("\n".join(lines) + "\n")


def cli_env(data: Path) -> dict[str, str]:
    """A run-repl process's environment: this checkout's code, the config under `data`."""
    return {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "PYTHONPATH": os.environ.get("PYTHONPATH", ""),
        "RUN_REPL_CONFIG_DIR": str(data / "config"),
        "HOME": str(data),
    }
