"""Install (or find) the MCP servers the upstream tests drive: Python ones from PyPI in a
venv of their own (their `mcp` must not replace ours), Node ones from the lockfile here.

    python tests/host/upstream_servers/install.py          # into tests/host/upstream_servers/.installed
    python tests/host/upstream_servers/install.py --check  # exit 1 when something is missing

`.ci/run` runs it before the tests; the tests find the programs with `program()`.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import venv
from pathlib import Path

HERE = Path(__file__).parent
INSTALLED = HERE / ".installed"
PYPI = ["mcp-server-time==2026.10.19", "mcp-server-git==2026.10.19"]
PROGRAMS = {
    "mcp-server-time": INSTALLED / "venv" / "bin" / "mcp-server-time",
    "mcp-server-git": INSTALLED / "venv" / "bin" / "mcp-server-git",
    "mcp-server-everything": HERE / "node_modules" / ".bin" / "mcp-server-everything",
    "mcp-server-filesystem": HERE / "node_modules" / ".bin" / "mcp-server-filesystem",
}


def program(name: str) -> Path | None:
    path = PROGRAMS[name]
    return path if path.exists() else None


def missing() -> list[str]:
    return [name for name in PROGRAMS if program(name) is None]


def install() -> None:
    if program("mcp-server-time") is None or program("mcp-server-git") is None:
        venv.create(INSTALLED / "venv", with_pip=True, clear=True)
        pip = INSTALLED / "venv" / "bin" / "pip"
        subprocess.run(
            [str(pip), "install", "-q", "--disable-pip-version-check", *PYPI], check=True
        )
    if program("mcp-server-everything") is None or program("mcp-server-filesystem") is None:
        npm = shutil.which("npm")
        if npm is None:
            sys.exit("upstream servers: npm is not on PATH (Node 20 and npm are needed for them)")
        subprocess.run(
            [npm, "ci", "--silent", "--no-audit", "--no-fund", "--prefix", str(HERE)], check=True
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="only say what is missing")
    args = parser.parse_args()
    if not args.check:
        install()
    gone = missing()
    if gone:
        print("upstream servers missing: " + ", ".join(gone), file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()
