"""A finished run as a shell sees it: the value on stdout, everything else on stderr.

`run-repl run`, `run-repl approvals approve` and the line REPL reading a piped
snippet all end this way, so `... > out.json` keeps the value and a script
reads the exit status (see ExitCode). Given a pager, a value bigger than its
window goes out whole, streamed from the store page by page; a value that
cannot go out whole says so and exits VALUE_CUT, never passing for whole.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import IO, Any

from ..sandbox.errors import ErrorCode, ResultRefNotFound
from ..sandbox.result import RunResult, plain_error
from ..sandbox.wire.nesting import ValueTooDeep
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
from .sanitize import safe, safe_json
from .styled import styled
from .whole_value import Pager, stored_pages, write_pages


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
    whole: Pager | None = None,
) -> ExitCode:
    """Write a finished run and return its exit status. With `as_json` stdout gets the
    envelope; else the value (as JSON), and stderr its logs, calls, error or what
    waits for approval (`not_saved`: why those approvals are not in a lasting
    store), then the status line. With `whole`, a windowed value is written whole
    (its items read through `whole`), else its first window and where the rest is."""
    code = ExitCode.from_status(result.status, approvals_saved=not_saved is None)
    err = output.err
    if as_json:
        output.out.text(safe_json(result.model_dump(mode="json")))
        if not_saved is not None:
            for it in result.interruptions or []:
                err.lines(not_saved_hint(it.id, not_saved))
        return code
    err.question(log_lines(result))  # printed above the question: wrapped rows marked
    err.question(calls_lines(result))  # a call's arguments are a snippet's text
    cut: str | None = None
    if whole is not None and _windowed(result):
        cut = _write_whole(result, whole, output.out)
    else:
        value = value_text(result)
        if value is not None:
            output.out.text(value)
        elif result.status == "ok":
            err.line(styled("dim", "undefined"))
        err.lines(window_note(result))
    if result.status == "error" and result.error is not None:
        err.lines(error_lines(result.error, source))
    for it in result.interruptions or []:
        err.question(interruption_lines(it))
        if not_saved is None:
            err.line(saved_hint(it.id, approve_command(it.id)))
        else:
            err.lines(not_saved_hint(it.id, not_saved))
    err.line(result_status_line(result))
    if cut is not None:
        err.line(styled("error", f"run-repl: {cut}"))
        return ExitCode.VALUE_CUT
    return code


def _windowed(result: RunResult) -> bool:
    """An ok result whose value holds more items than its window shows."""
    shown = result.shown if result.shown is not None else 0
    return result.status == "ok" and result.value_window is not None and shown < (result.total or 0)


class _SafeSink:
    """Writes to a stream through the sanitizer (the pieces are a page each)."""

    def __init__(self, stream: IO[str]) -> None:
        self.stream = stream

    def write(self, text: str) -> None:
        self.stream.write(safe(text))


def _write_whole(result: RunResult, pager: Pager, out: TerminalWriter) -> str | None:
    """Stream the whole value to `out`; None when it all went, else why it is cut.
    A cut stream stops before its closing bracket, so it is never valid JSON."""
    window = result.value_window
    assert window is not None
    total = result.total or 0
    if result.value_ref is None:
        return (
            f"the value was not written: only its first {len(window.items):,} of {total:,} "
            "items were stored. Run the snippet again, or pass --window for those."
        )
    written = 0

    def counted() -> Iterator[list[Any]]:
        nonlocal written
        for page in stored_pages(pager, result.value_ref or ""):
            yield page
            written += len(page)

    try:
        write_pages(_SafeSink(out.stream), window.path, window.rest, counted())
    except (ResultRefNotFound, ValueTooDeep) as exc:
        out.stream.write("\n")
        out.stream.flush()
        return f"the value on stdout is cut after {written:,} of {total:,} items: {exc.code}: {exc}"
    out.stream.flush()
    return None


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
