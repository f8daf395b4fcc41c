"""The nesting bound: refused at once, before tree-sitter, where the code nests
too deep; never for code that does not."""

from __future__ import annotations

import pytest

from run_repl.sandbox.errors import TypeScriptSyntaxError
from run_repl.sandbox.process.typescript import MAX_NESTING_DEPTH, check_nesting, strip_types

N = MAX_NESTING_DEPTH
BIG = 256 * 1024


@pytest.mark.parametrize(
    "bomb, column",
    [
        ("(" * (BIG // 2) + ")" * (BIG // 2), N + 1),
        ("[" * (BIG // 2) + "]" * (BIG // 2), N + 1),
        ("{a:" * (BIG // 4) + "1" + "}" * (BIG // 4), 3 * N + 1),
        ("`${" * (BIG // 5) + "1" + "}`" * (BIG // 5), 3 * N + 2),
        ("let x: " + "A<" * (BIG // 3) + "B" + ">" * (BIG // 3), 8 + 2 * N + 1),
        ("f(" + "[{" * (BIG // 4), N + 2),
        ("let x: " + "A<\n" * (BIG // 3), None),
    ],
    ids=["parens", "brackets", "objects", "templates", "type arguments", "mixed", "over lines"],
)
def test_bombs_are_refused_where_they_pass_the_bound(bomb: str, column: int | None) -> None:
    with pytest.raises(TypeScriptSyntaxError) as caught:
        strip_types(bomb)
    if column is None:  # one `<` a line: the bound is passed on line N + 1
        assert (caught.value.line, caught.value.column) == (N + 1, 2)
    else:
        assert (caught.value.line, caught.value.column) == (1, column)
    assert f"{N:,} levels" in caught.value.message


def test_the_position_is_on_the_users_line() -> None:
    source = "const a = 1\nconst b = 2\n  x = " + "(" * (N + 5)
    with pytest.raises(TypeScriptSyntaxError) as caught:
        check_nesting(source)
    assert (caught.value.line, caught.value.column) == (3, 7 + N)


@pytest.mark.parametrize(
    "source",
    [
        "(" * N + "1" + ")" * N,
        "`${" * (N // 2) + "1" + "}`" * (N // 2),
        # Brackets that are text, not code, never count.
        "const s = '" + "(" * 5000 + "'; s",
        'const s = "' + "[" * 5000 + '"; s',
        "// " + "(" * 5000 + "\n/* " + "{" * 5000 + " */ 1",
        "const t = `" + "(" * 5000 + "`; t",
        "const r = /" + "\\(" * 3000 + "/; r",
        "const r = /[" + "(" * 3000 + "]/; r",
        # Comparisons never add up, on one line or many.
        "let a = 1, b = 2\n" + "if (a < b) a++\n" * 5000,
        "let a = 1, b = 2, c\n" + "c = a < b\n" * 5000,
        "let a = 1, b = 2; const c = [" + "a < b, " * 3000 + "]",
        "let a = 1, b = 2; const ok = " + "a < b && " * 3000 + "true",
        "let a = 1; a = a << 1 <= 3 ? 1 : 2; " * 2000,
        "type M = Map<string, Array<number>>;\n" * 3000 + "1",
        # Division is not a regular expression.
        "let a = 4, b = 2; const c = a / (b) / 2; " * 2000,
    ],
    ids=[
        "depth at the bound",
        "templates at the bound",
        "single-quoted",
        "double-quoted",
        "comments",
        "template text",
        "regex escapes",
        "regex class",
        "comparisons a line",
        "comparisons in statements",
        "comparisons in an array",
        "comparisons in a condition",
        "shifts",
        "type arguments",
        "division",
    ],
)
def test_code_within_the_bound_passes(source: str) -> None:
    check_nesting(source)


def test_a_deep_bomb_is_refused_in_linear_time() -> None:
    # Not a timing assertion: the check stops at the bound, so it looks at a
    # prefix of the text only (a quadratic scan would not finish this test).
    bomb = "(" * (64 << 20)
    with pytest.raises(TypeScriptSyntaxError):
        check_nesting(bomb)
