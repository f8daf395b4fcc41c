"""The `run-repl` command's entry point: Ctrl-C from the first instant ends it quietly.

Importing run-repl takes a second or two on a busy machine (pydantic, the engine,
Textual); a Ctrl-C then would print a traceback of whatever was being imported.
This module imports nothing of its own at its top, so the console script gets
here at once, and the rest is imported inside the guard.
"""

from __future__ import annotations

from collections.abc import Sequence

CANCELLED = 130  # 128 + SIGINT, as shells report Ctrl-C (ExitCode.CANCELLED)


def main(argv: Sequence[str] | None = None) -> int:
    """`run-repl`: see `run-repl --help`. Ctrl-C at any point exits 130, saying nothing."""
    try:
        from .cli import main as cli_main

        return cli_main(argv)
    except KeyboardInterrupt:
        return CANCELLED
