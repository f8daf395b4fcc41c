"""TypeScript is stripped inside the run's worker: inside its deadline and its
walls, never on the parent's event loop; positions still map to the user's text."""

from __future__ import annotations

import asyncio

import pytest

from run_repl import Limits, run
from run_repl.sandbox.process import frames
from run_repl.sandbox.process.source import PreparedSource, prepare_source
from run_repl.sandbox.process.typescript import MAX_NESTING_DEPTH

# tree-sitter takes seconds on this (quadratic), and it nests no bracket, so the
# nesting bound does not catch it: only the deadline can.
SLOW_TO_STRIP = "new " * 65_000 + "x"


async def test_a_typescript_error_comes_from_the_worker_at_the_users_position() -> None:
    result = await run("const a: number = 1\n  enum Color { Red }\nreturn a")
    error = result.error
    assert error is not None and error.code == "RUN_SYNTAX_ERROR"
    assert (error.line, error.column) == (2, 3)
    assert error.message.startswith("SyntaxError: TypeScript `enum` needs compiling")
    assert error.message.endswith("(line 2, column 3)")
    assert error.next_actions[0].type == "edit_request"
    assert (error.next_actions[0].line, error.next_actions[0].column) == (2, 3)  # type: ignore[attr-defined]
    assert result.stats.worker_mode in ("fork", "spawn")  # the worker said so


async def test_nesting_past_the_bound_is_a_syntax_error_at_once() -> None:
    deep = "return " + "[" * (MAX_NESTING_DEPTH + 1) + "]" * (MAX_NESTING_DEPTH + 1)
    result = await run(deep)
    error = result.error
    assert error is not None and error.code == "RUN_SYNTAX_ERROR"
    assert (error.line, error.column) == (1, 8 + MAX_NESTING_DEPTH)
    assert f"{MAX_NESTING_DEPTH:,} levels" in error.message
    # Code at the bound runs (not its value: values nest at most MAX_DEPTH levels).
    at_the_bound = "return " + "[" * 500 + "]" * 500 + ".length"
    result = await run(at_the_bound)
    assert result.status == "ok" and result.value == 1


async def test_stripping_counts_toward_the_deadline() -> None:
    result = await run(SLOW_TO_STRIP, limits=Limits(timeout_ms=300))
    assert result.error is not None and result.error.code == "RUN_TIMEOUT"
    assert result.duration_ms >= 300


async def test_a_slow_strip_leaves_the_event_loop_to_other_runs() -> None:
    cancel = asyncio.Event()
    slow = asyncio.ensure_future(run(SLOW_TO_STRIP, cancel=cancel))
    await asyncio.sleep(0)  # the slow run has started: its source is on its way
    normal = await run("let n: number = 40; n + 2")
    still_stripping = not slow.done()
    cancel.set()
    stopped = await slow
    assert normal.value == 42
    assert still_stripping, "the other run waited for the slow strip"
    assert stopped.error is not None and stopped.error.code == "RUN_ABORTED"


async def test_positions_of_runtime_errors_and_logged_stacks_map_back() -> None:
    source = (
        "type Row = { id: number }\n"
        "const rows: Row[] = [{ id: 1 }]\n"
        "try { null.x } catch (e: any) { console.log(e.stack) }\n"
        "const é: string = 'x'; throw new Error('boom ' + rows.length)"
    )
    result = await run(source)
    error = result.error
    assert error is not None and error.code == "RUN_EXCEPTION"
    # Where QuickJS points (the last operand), in characters of the user's line.
    assert (error.line, error.column) == (4, 50)
    assert "(snippet:3:7)" in result.logs[0].text


def test_a_prepared_source_crosses_the_pipe_whole() -> None:
    prepared = prepare_source("const x: number = 1\nx + 1")
    message = frames.decode(
        frames.Kind.PREPARED, frames.prepared_frame(prepared.to_wire(), prepared.code)[5:]
    )
    assert isinstance(message, frames.Prepared)
    back = PreparedSource.from_wire(message.fields, message.code)
    assert back == prepared
    assert back.to_user_position(2, 8) == prepared.to_user_position(2, 8)


@pytest.mark.parametrize(
    "fields",
    [
        {},
        {"user_lines": "1", "return_line": 0, "return_column": 0, "last_line_length": 0},
        {"user_lines": 1, "return_line": -1, "return_column": 0, "last_line_length": 0},
        {"user_lines": 1, "return_line": True, "return_column": 0, "last_line_length": 0},
    ],
)
def test_a_prepared_source_from_a_worker_is_checked(fields: dict[str, object]) -> None:
    with pytest.raises(ValueError):
        PreparedSource.from_wire(fields, "code")
