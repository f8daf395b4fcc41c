"""Preparing a snippet for QuickJS: the wrapper, the returned value, and positions back."""

from __future__ import annotations

import json
import random
import re
from dataclasses import dataclass
from typing import Any

import _quickjs
import pytest

from run_repl.sandbox.process.source import WRAPPER_FUNCTION_NAME, PreparedSource, prepare_source
from run_repl.sandbox.process.typescript import TypeScriptSyntaxError

HEADER = '(async function __snippet__() {"use strict";'
_POSITION = re.compile(r"<input>:(\d+):(\d+)")
_UNDEFINED = object()


@dataclass
class Outcome:
    kind: str  # "value", "syntax" or "runtime"
    value: Any = None
    message: str = ""
    # Every position in the error's trace, mapped to the user's (line, column).
    positions: tuple[tuple[int, int], ...] = ()


def _positions(prepared: PreparedSource, text: str) -> tuple[tuple[int, int], ...]:
    return tuple(
        prepared.to_user_position(int(line), int(column))
        for line, column in _POSITION.findall(text)
    )


def run(source: str) -> Outcome:
    """Prepare `source`, compile it in a fresh QuickJS context, call it and settle it."""
    prepared = prepare_source(source)
    context = _quickjs.Context()
    try:
        function = context.eval(prepared.code)
    except _quickjs.JSException as exc:
        text = str(exc)
        return Outcome("syntax", message=text.splitlines()[0], positions=_positions(prepared, text))
    context.set("__fn", function)
    context.eval(
        "globalThis.__out = undefined; globalThis.__err = undefined;"
        "__fn().then(v => { globalThis.__out = JSON.stringify({ v }) },"
        " e => { globalThis.__err = String(e) + '\\n' + e.stack })"
    )
    while context.execute_pending_job():
        pass
    error = context.get("__err")
    if error is not None:
        return Outcome(
            "runtime", message=error.splitlines()[0], positions=_positions(prepared, error)
        )
    return Outcome("value", value=json.loads(context.get("__out")).get("v", _UNDEFINED))


def value_of(source: str) -> Any:
    outcome = run(source)
    assert outcome.kind == "value", outcome
    return outcome.value


# --- the wrapper ------------------------------------------------------------------------


def test_code_is_exactly_header_body_footer() -> None:
    assert WRAPPER_FUNCTION_NAME == "__snippet__"
    assert prepare_source("1+1").code == HEADER + "return 1+1\n})"
    assert prepare_source("let x: number = 1").code == HEADER + "let x         = 1\n})"
    assert prepare_source("const a = 1; a").code == HEADER + "const a = 1; return a\n})"


def test_user_line_n_is_code_line_n() -> None:
    source = "const a = 1\n\nconst b: number = 2\na + b"
    prepared = prepare_source(source)
    code_lines = prepared.code.split("\n")
    assert prepared.user_lines == 4
    assert code_lines[0] == HEADER + "const a = 1"
    assert code_lines[2] == "const b         = 2"
    assert code_lines[3] == "return a + b"
    assert code_lines[4] == "})"


def test_empty_source() -> None:
    prepared = prepare_source("")
    assert prepared.code == HEADER + "\n})"
    assert prepared.user_lines == 1
    assert value_of("") is _UNDEFINED
    assert value_of("   \n// nothing\n") is _UNDEFINED


def test_prepared_sources_are_cached_by_text() -> None:
    source = "const cached = 41\ncached + 1"
    assert prepare_source(source) is prepare_source(source)
    assert prepare_source(source) is not prepare_source(source + " ")


def test_prepare_source_raises_typescript_syntax_errors() -> None:
    with pytest.raises(TypeScriptSyntaxError) as caught:
        prepare_source("const x = 1\nenum E { A }")
    assert (caught.value.line, caught.value.column) == (2, 1)


# --- the value ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("1+1", 2),
        ("const x = 2; x * 3", 6),
        ("const a = false\nif (a) return 1; 5", 5),
        ("const a = true\nif (a) return 1; 5", 1),
        ("({ a: 1, b: [2] })", {"a": 1, "b": [2]}),
        ("return 'early'\n'late'", "early"),
        ("function f() { return 1 }\nif (f()) { return 'from if' }\n'after'", "from if"),
        ("1 + 1 // two\n\n/* done */\n\n", 2),
        ("[1, 2, 3]\n  .map(x => x * 2)\n  .filter(x => x > 2)", [4, 6]),
        ("const n: number = 2;\n(n as number) * (<number>3)", 6),
        ("<number>\n  (41 + 1)", 42),
        ("const o = { a: { b: 2 } } as const\no!.a!.b satisfies number", 2),
        ("40 + 2\ninterface I { x: number }", 42),
        ("40 + 2\ntype T = number", 42),
        ("await Promise.resolve(41) + 1", 42),
        ("const v = await new Promise<number>(r => r(21))\nv * 2", 42),
        ("const s = 'é😀'\ns + s.length", "é😀3"),
        ("const a = 2\r\na * 21\r\n", 42),
        ("const f = (x: number): number => x + 1\nf(41)", 42),
        ("class A { private x = 42; get(): number { return this.x } }\nnew A().get()", 42),
        ("let x\nx = 3", 3),
        ("'directive-like string'", "directive-like string"),
        ("const g = (x: number): {\n  a: number\n} => ({ a: x })\ng(7).a", 7),
        ("const h = (x: number)\n  : number => x * 2\nh(21)", 42),
    ],
)
def test_value_of_last_expression_or_return(source: str, expected: Any) -> None:
    assert value_of(source) == expected


@pytest.mark.parametrize(
    "source",
    [
        "const x = 1",
        "let y = 2\nfunction f() {}",
        "class A {}",
        "for (const i of [1]) i",
        "l: for (;;) break l",
        "if (true) 5",
    ],
)
def test_declaration_or_statement_last_gives_undefined(source: str) -> None:
    assert value_of(source) is _UNDEFINED


def test_top_level_await_suspends_and_resumes() -> None:
    source = (
        "const order: string[] = []\n"
        "const p = Promise.resolve().then(() => order.push('then'))\n"
        "order.push('before')\n"
        "await p\n"
        "order"
    )
    assert value_of(source) == ["before", "then"]


# --- positions back to the user's text ------------------------------------------------------


@pytest.mark.parametrize(
    ("source", "position"),
    [
        ("let x = ;", (1, 9)),
        ("const s='ééé'; let x = ;", (1, 24)),
        ('1\n2\nconst s = "😀"; let x = ;', (3, 24)),
        ("let a = 1\r\nlet x = ;\r\n", (2, 9)),
        ("let a: number = 1\nlet b = a as number,;", (2, 21)),
        # strict-mode errors tree-sitter accepts, so `return` is inserted before them
        ("const a = 1; a + 010", (1, 18)),
        ("const é = 1; é + 010", (1, 18)),
        ("const a = 1\n  a + 010", (2, 7)),
        ("const ü = 'ü'\n'😀' + 010", (2, 7)),
        # an unclosed block ends at the footer: the end of the last user line
        ("if (true) {\n  1", (2, 4)),
        ("const x = [\n  'é',", (2, 7)),
    ],
)
def test_syntax_error_positions(source: str, position: tuple[int, int]) -> None:
    outcome = run(source)
    assert outcome.kind == "syntax", outcome
    assert outcome.message.startswith("SyntaxError")
    assert outcome.positions == (position,)


@pytest.mark.parametrize(
    ("source", "position"),
    [
        # on line 1 (the header's line), as the returned last expression
        ("nope", (1, 1)),
        ("const s = 'é😀'; nope", (1, 17)),
        ("const s = 'é😀'; s + nope", (1, 21)),
        # on the line where `return ` is inserted
        ("const s = 'ü'\n  s + nope", (2, 7)),
        ("const s = '€'\n  '😀' + s + nope", (2, 13)),
        # not the last expression
        ("const s = '😀'; nope; 1", (1, 16)),
        ("const t = 'ä'\nconst v = t + nope\nv", (2, 15)),
        # CRLF line endings
        ("const o = 1\r\nnope\r\n", (2, 1)),
        ("const o = 1\r\n  const p = 'é' + nope\r\np", (2, 19)),
        # thrown from a nested function
        ("function f(): never {\n  throw new Error('x')\n}\nf()", (2, 13)),
    ],
)
def test_runtime_error_positions(source: str, position: tuple[int, int]) -> None:
    outcome = run(source)
    assert outcome.kind == "runtime", outcome
    assert outcome.positions[0] == position


def test_runtime_error_trace_maps_every_frame() -> None:
    source = "function f() {\n  const o: any = undefined\n  return o.x\n}\n'é'; f()"
    outcome = run(source)
    assert outcome.kind == "runtime"
    assert outcome.message.startswith("TypeError")
    # `o` in `return o.x`, then the call `f()` after the inserted `return `
    assert outcome.positions[:2] == ((3, 10), (5, 6))


def test_positions_inside_the_header_map_to_column_one() -> None:
    prepared = prepare_source("x")
    for column in range(1, len(HEADER) + 1):
        assert prepared.to_user_position(1, column) == (1, 1)


def test_positions_inside_the_inserted_return_map_to_the_insertion_point() -> None:
    prepared = prepare_source("const é = 1\n  é + 1")
    line = prepared.code.split("\n")[1]
    assert line == "  return é + 1"
    for byte_column in range(3, 3 + len("return ")):
        assert prepared.to_user_position(2, byte_column) == (2, 3)
    assert prepared.to_user_position(2, 10) == (2, 3)  # `é`, after `return `
    assert prepared.to_user_position(2, 12) == (2, 4)  # the space after the two-byte `é`
    assert prepared.to_user_position(2, 2) == (2, 2)  # before the insertion


def test_return_inserted_on_line_one_after_the_header() -> None:
    prepared = prepare_source("const s = '😀'; s")
    first = HEADER + "const s = '😀'; "
    assert prepared.code.startswith(first + "return s")
    s_byte_column = len(first.encode()) + len("return ") + 1
    assert prepared.to_user_position(1, s_byte_column) == (1, 16)
    # inside `return `
    assert prepared.to_user_position(1, s_byte_column - 3) == (1, 16)


def test_byte_columns_inside_a_character_land_on_it() -> None:
    prepared = prepare_source("x\n'😀'")
    # the emoji's four bytes are at byte columns 9..12 of `return '😀'`
    for byte_column in range(9, 13):
        assert prepared.to_user_position(2, byte_column) == (2, 2)
    assert prepared.to_user_position(2, 13) == (2, 3)


def test_positions_past_the_user_text_map_to_the_end_of_the_last_line() -> None:
    prepared = prepare_source("const a = 1\nconst bé = 2")
    assert prepared.to_user_position(3, 1) == (2, 13)
    assert prepared.to_user_position(3, 2) == (2, 13)
    # beyond a line's end, extra bytes count as characters: `const bé = 2` is 13 bytes
    assert prepared.to_user_position(2, 100) == (2, 12 + (100 - 13))
    assert prepare_source("").to_user_position(2, 1) == (1, 1)
    assert prepared.to_user_position(0, 5) == (1, 1)


# --- the snippet cannot leave the wrapper ------------------------------------------------------


ESCAPES = [
    "}); (function(){",
    "}); globalThis.pwned = 1; (function(){",
    "})\n(function(){",
    "} )\nglobalThis.pwned = 1\n;(function () {",
    "/* */ }); (function(){ //",
    "'}' }); (function(){",
    "`${'}'}`; }); (function(){",
    "if (a) /}/.test(b); }); (function(){",
    "let x = a\n/}); globalThis.pwned = 1; (function(){ 1 /2",
    "<!-- {\n}); globalThis.pwned = 1; (function(){",
    "x = 1 /*\n*/ --> {\n}); globalThis.pwned = 1; (function(){",
    "--> {\n}); globalThis.pwned = 1; (function(){",
    "// \u2028}); globalThis.pwned = 1; (function(){",
    "// \r}); globalThis.pwned = 1; (function(){",
    "type T = { a: 1 } }); globalThis.pwned = 1; (function(){",
    "let x: { a: number }}); globalThis.pwned = 1; (function() {",
    "interface I { }}); globalThis.pwned = 1; (function(){",
    "declare const x: number }); globalThis.pwned = 1; (function(){",
    "const a = b as T }); globalThis.pwned = 1; (function(){",
    "}",
    "})",
    "}) //",
    "}); //",
    "\n})",
    "}})({",
]


def _assert_stays_inside(source: str) -> None:
    """`ctx.eval(code)` raises a SyntaxError or gives our one function, with no side effect."""
    try:
        prepared = prepare_source(source)
    except TypeScriptSyntaxError:
        return  # refused before QuickJS sees it
    context = _quickjs.Context()
    try:
        function = context.eval(prepared.code)
    except _quickjs.JSException as exc:
        assert str(exc).startswith("SyntaxError"), (source, str(exc))
        return
    assert isinstance(function, _quickjs.Object), source
    context.set("__fn", function)
    # Our function's own source text is the whole code inside the outer parentheses.
    assert context.eval("__fn.toString()") == prepared.code[1:-1], source
    assert context.eval("__fn.name") == WRAPPER_FUNCTION_NAME
    assert context.eval("typeof globalThis.pwned") == "undefined", source


@pytest.mark.parametrize("source", ESCAPES)
def test_snippet_cannot_close_the_wrapper(source: str) -> None:
    _assert_stays_inside(source)


def test_unbalanced_closing_brace_is_refused_with_a_position() -> None:
    with pytest.raises(TypeScriptSyntaxError) as caught:
        prepare_source("const é = 1\n  }); (function(){")
    assert (caught.value.line, caught.value.column) == (2, 3)


FRAGMENTS = [
    "}",
    ")",
    ";",
    "{",
    "(",
    "[",
    "]",
    "(function(){",
    "function f() {",
    "//",
    "/*",
    "*/",
    "\n",
    "\r",
    "\u2028",
    "'",
    '"',
    "`",
    "${",
    "/",
    "/x/",
    "<!--",
    "-->",
    " ",
    "x",
    "1",
    "as T",
    "<T>",
    ": T",
    "!",
    "type T = {",
    "interface I {",
    "class A {",
    "declare ",
    "=>",
    ",",
    "globalThis.pwned = 1",
    "return",
    "await",
    "enum",
    "@",
    "#",
    "?",
    ".",
]


def test_random_fragments_never_leave_the_wrapper() -> None:
    rng = random.Random(20240601)
    for _ in range(1500):
        source = "".join(rng.choice(FRAGMENTS) for _ in range(rng.randint(1, 9)))
        _assert_stays_inside(source)
