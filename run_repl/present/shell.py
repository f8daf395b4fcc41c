"""A finished run as a shell sees it: the value on stdout, everything else on stderr.

`run-repl run`, `run-repl approvals approve` and the line REPL reading a piped
snippet all end this way, so `... > out.json` keeps the value and a script
reads the exit status (see ExitCode).
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import dataclass

from ..sandbox.errors import ErrorCode
from ..sandbox.result import RunResult, plain_error
from .approvals import not_saved_hint, saved_hint
from .exit_codes import ExitCode
from .results import (
    calls_lines,
    error_lines,
    interruption_lines,
    log_lines,
    result_status_line,
    value_text,
    window_note,
)
from .rich_render import TerminalWriter
from .sanitize import safe_json
from .styled import styled


@dataclass
class Output:
    """Where a command writes: `out` for its result (stdout), `err` for the rest."""

    out: TerminalWriter
    err: TerminalWriter
    seen_warnings: int = 0  # how many of the workspace's warnings are printed already

    def warn(self, text: str) -> None:
        self.err.line(styled("warn", f"run-repl: warning: {text}"))

    def warnings(self, warnings: list[str]) -> None:
        """Print the warnings not printed yet (opening the workspace, recording a run...)."""
        for warning in warnings[self.seen_warnings :]:
            self.warn(warning)
        self.seen_warnings = len(warnings)


def write_run(
    result: RunResult,
    source: str | None,
    output: Output,
    *,
    as_json: bool,
    not_saved: str | None,
    approve_command: Callable[[str], str],
) -> ExitCode:
    """Write a finished run and return its exit status. With `as_json` stdout gets the
    envelope; else the value (as JSON), and stderr its logs, calls, error or what
    waits for approval (`not_saved`: why those approvals are not in a lasting
    store), then the status line."""
    code = ExitCode.from_status(result.status, approvals_saved=not_saved is None)
    err = output.err
    if as_json:
        output.out.text(safe_json(result.model_dump(mode="json")))
        if not_saved is not None:
            for it in result.interruptions or []:
                err.lines(not_saved_hint(it.id, not_saved))
        return code
    err.lines(log_lines(result))
    err.lines(calls_lines(result))
    value = value_text(result)
    if value is not None:
        output.out.text(value)
    elif result.status == "ok":
        err.line(styled("dim", "undefined"))
    err.lines(window_note(result))
    if result.status == "error" and result.error is not None:
        err.lines(error_lines(result.error, source))
    for it in result.interruptions or []:
        err.lines(interruption_lines(it))
        if not_saved is None:
            err.line(saved_hint(it.id, approve_command(it.id)))
        else:
            err.lines(not_saved_hint(it.id, not_saved))
    err.line(result_status_line(result))
    return code


class SourceError(Exception):
    """The snippet cannot be read (a missing file, not UTF-8); the message is one line."""


def read_source(name: str, limit: int) -> tuple[str, bool]:
    """The snippet from a file or stdin (`-`), reading at most `limit + 1` bytes:
    (its text, whether it is over `limit`). An endless input ends at once."""
    try:
        if name == "-":
            stream = getattr(sys.stdin, "buffer", None)
            if stream is None:  # a text-only stdin (an embedding program's)
                text = sys.stdin.read(limit + 1)
                return text, len(text.encode("utf-8", "surrogatepass")) > limit
            data = stream.read(limit + 1)
        else:
            with open(name, "rb") as fh:
                data = fh.read(limit + 1)
    except OSError as exc:
        raise SourceError(f"cannot read {name}: {exc.strerror or exc}") from None
    if len(data) > limit:
        return data.decode("utf-8", "replace"), True
    try:
        return data.decode("utf-8"), False
    except UnicodeDecodeError:
        raise SourceError(f"{'stdin' if name == '-' else name} is not UTF-8 text") from None


def source_too_large(name: str, limit: int) -> RunResult:
    """The result for a source over `limit`, said without reading the rest of it."""
    where = "stdin" if name == "-" else name
    message = (
        f"{where} holds more than max_source_bytes ({limit:,} bytes); it was not read further."
    )
    return RunResult(status="error", error=plain_error(ErrorCode.RUN_SOURCE_TOO_LARGE, message))
