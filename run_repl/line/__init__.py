"""The line REPL (`run-repl repl`): a prompt-toolkit prompt over a workspace."""

from .repl import run_line_repl

__all__ = ["run_line_repl"]
