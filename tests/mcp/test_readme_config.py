"""The README's MCP client configuration: a client that starts the server with only
what the configuration gives it still uses the store the person approves from."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import forked_cli

README = Path(__file__).parents[2] / "README.md"


def mcp_section() -> str:
    text = README.read_text()
    start = text.index("## AI agents: `run-repl mcp`")
    return text[start : text.index("\n## ", start + 1)]


def client_config() -> dict[str, object]:
    [block] = [
        b for b in re.findall(r"```json\n(.*?)```", mcp_section(), re.S) if "mcpServers" in b
    ]
    return json.loads(block)["mcpServers"]["run-repl"]


def test_the_client_config_names_the_data_directory(tmp_path: Path) -> None:
    config = client_config()
    env = config["env"]
    assert isinstance(env, dict) and "RUN_REPL_DATA_DIR" in env
    # Started as a client starts it: the command, its args, and only the config's env
    # (no HOME, no XDG_*): the banner names the store in the directory it gave.
    data = tmp_path / "person's data"
    given = {k: str(data) if k == "RUN_REPL_DATA_DIR" else str(v) for k, v in env.items()}
    assert config["command"] == "run-repl"
    argv = forked_cli.command(*config["args"])  # type: ignore[misc]
    proc = subprocess.run(
        argv,
        input="",
        capture_output=True,
        text=True,
        timeout=120,
        env={"PATH": "/usr/bin:/bin", **given},
    )
    assert proc.returncode == 0, proc.stderr
    assert f"store {data / 'run-repl.sqlite3'}" in proc.stderr, proc.stderr


def test_the_clients_tried_are_named_with_their_versions() -> None:
    section = mcp_section()
    tried = section[section.index("Clients tried") :]
    assert re.search(r"`mcp` Python package's own client \(2\.3", tried)
    assert re.search(r"`@modelcontextprotocol/sdk`\s+1\.32\.2", tried)
    assert re.search(r"MCP Inspector\s+0\.15\.0", tried)
    # What was checked with them: the error results, which they validate as well.
    assert "error results" in tried
