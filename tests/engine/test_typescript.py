"""Type stripping: exact outputs, refusals, `;` guards, and that QuickJS accepts the result."""

from __future__ import annotations

import json
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import _quickjs
import pytest

from run_repl.sandbox.process.source import prepare_source
from run_repl.sandbox.process.typescript import TypeScriptSyntaxError, strip_types

SHAPE = (
    "abstract class Shape<T> extends Base<T> implements HasArea, Named {\n"
    '  private readonly id: string = "s"\n'
    "  protected static count?: number\n"
    "  public override name!: string\n"
    "  declare tag: string\n"
    "  [key: string]: unknown\n"
    "  abstract area(): number\n"
    "  protected abstract describe(prefix?: string): string\n"
    "  constructor(id: string) { super(); this.id = id }\n"
    "  public get label(): string { return this.name }\n"
    "  private static make<U>(this: void, u: U): U { return u }\n"
    "  move(dx: number): void\n"
    "  move(dx: number, dy?: number): void {}\n"
    "  optional?(): void {}\n"
    "  #secret: number = 1\n"
    "}"
)
SHAPE_STRIPPED = (
    "         class Shape    extends Base                              {\n"
    '  ;                id         = "s"\n'
    "  ;         static count        ;\n"
    "  ;               name        ;\n"
    "  ;                  \n"
    "  ;                     \n"
    "  ;                      \n"
    "  ;                                                   \n"
    "  constructor(id        ) { super(); this.id = id }\n"
    "  ;      get label()         { return this.name }\n"
    "  ;       static make   (            u   )    { return u }\n"
    "  ;                     \n"
    "  move(dx        , dy         )       {}\n"
    "  optional ()       {}\n"
    "  #secret         = 1\n"
    "}"
)

# (TypeScript, the exact JavaScript it becomes)
STRIP_CASES: list[tuple[str, str]] = [
    # annotations on variables, parameters and returns
    ("let x: number = 1", "let x         = 1"),
    ('let a: string = "", b: number[] = []', 'let a         = "", b           = []'),
    ("let x!: number;", "let x         ;"),
    ("let x: number", "let x       ;"),
    ("function f(a: number, b?: string): void {}", "function f(a        , b         )       {}"),
    ("function f(x: number = 1) { return x }", "function f(x         = 1) { return x }"),
    ("function f(...xs: number[]) {}", "function f(...xs          ) {}"),
    (
        "function f({ a, b }: { a: number; b: string }) {}",
        "function f({ a, b }                          ) {}",
    ),
    ("let fn: (a: number) => void = () => {}", "let fn                      = () => {}"),
    (
        "let u: A | B & { c: keyof T extends infer U ? U : never } = null",
        "let u                                                     = null",
    ),
    ('let t: [a: string, b?: number] = ["x"]', 'let t                          = ["x"]'),
    ('let k: `on${string}` = "onX"', 'let k                = "onX"'),
    ("try {} catch (e: unknown) {}", "try {} catch (e         ) {}"),
    # `this` parameters, with their comma
    ("function f(this: Window) {}", "function f(            ) {}"),
    ("function f(this: Foo, a: number) {}", "function f(           a        ) {}"),
    # type predicates and assertion signatures
    (
        'function isStr(x: unknown): x is string { return typeof x === "string" }',
        'function isStr(x         )              { return typeof x === "string" }',
    ),
    (
        "function check(x: unknown): asserts x is string {}",
        "function check(x         )                      {}",
    ),
    ("function ok(x: unknown): asserts x {}", "function ok(x         )            {}"),
    # arrows and generics
    ("const f = (x: number): number => x * 2", "const f = (x        )         => x * 2"),
    ("const id = <T,>(x: T) => x", "const id =     (x   ) => x"),
    ("const id = <T>(x: T): T => x", "const id =    (x   )    => x"),
    (
        "const pair = <A,>(a: A) => <B,>(b: B): [A, B] => [a, b]",
        "const pair =     (a   ) =>     (b   )         => [a, b]",
    ),
    (
        "const f = async <T,>(x: T): Promise<T> => x",
        "const f = async     (x   )             => x",
    ),
    (
        "function id<T extends object = {}>(x: T): T { return x }",
        "function id                       (x   )    { return x }",
    ),
    ("f<string>(1)", "f        (1)"),
    ("new Map<string, number>()", "new Map                ()"),
    ("const g = f<string>", "const g = f       ;"),
    ("a?.b<T>()", "a?.b   ()"),
    (
        "const m = new Map<\n  string,\n  Array<number>\n>()",
        "const m = new Map \n         \n               \n ()",
    ),
    ("const o = { m<T>(x: T): T { return x } }", "const o = { m   (x   )    { return x } }"),
    (
        "const o = { get v(): number { return 1 }, set v(x: number) {} }",
        "const o = { get v()         { return 1 }, set v(x        ) {} }",
    ),
    # JavaScript forbids a line break before `=>`: a return type spanning lines takes the `)`
    (
        "const g = (x: number): {\n  a: number\n} => ({ a: x })",
        "const g = (x            \n           \n) => ({ a: x })",
    ),
    ("const h = (x: number)\n  : number => x", "const h = (x         \n         ) => x"),
    ("const f = (x: number): number => x", "const f = (x        )         => x"),
    # assertions, `as`, `satisfies`, non-null
    ("const y = <any>x", "const y =      x"),
    ("const y = x as unknown as string", "const y = x                    ;"),
    ("const c = [1, 2] as const", "const c = [1, 2]        ;"),
    (
        "const c = { a: 1 } satisfies Record<string, number>",
        "const c = { a: 1 }                                ;",
    ),
    ("for (const x of xs as number[]) {}", "for (const x of xs            ) {}"),
    ("a!.b!.c", "a .b .c"),
    ("a![0]!", "a [0];"),
    ("f()!.g", "f() .g"),
    ("x! == y", "x  == y"),
    ("const v = obj!\n(f)", "const v = obj \n(f)"),
    # type-only statements become an empty statement
    ("interface P { x: number; y: number }", ";                                   "),
    (
        "type Pair<T> = {\n  first: T\n  second: T\n}",
        ";               \n          \n           \n ",
    ),
    ("declare const VERSION: string", ";                            "),
    ("declare function g(): void", ";                         "),
    ("declare namespace NS { const a: number }", ";                                       "),
    ('declare module "m" { export const a: number }', ";" + " " * 44),
    ("declare enum E { A }", ";                   "),
    ("declare global { interface Window { x: number } }", ";" + " " * 48),
    (
        "function over(a: string): string\n"
        "function over(a: number): number\n"
        "function over(a: any) { return a }",
        ";                               \n"
        ";                               \n"
        "function over(a     ) { return a }",
    ),
    # classes
    ("class A implements B, C<D> {}", "class A                    {}"),
    ("class A<T> extends B<T> {}", "class A    extends B    {}"),
    ("const C = class<T> { v?: T }", "const C = class    { v   ; }"),
    (SHAPE, SHAPE_STRIPPED),
    (
        "class A { static override readonly x = 1; "
        "protected async *gen<T>(): AsyncGenerator<T> {} }",
        "class A { static                   x = 1; "
        ";         async *gen   ()                    {} }",
    ),
    (
        "class A { constructor(x: string);\n  constructor(x: any) {} }",
        "class A { ;                     ;\n  constructor(x     ) {} }",
    ),
    (
        'class A {\n  x = 1\n  private [k] = 2\n  declare y: number\n  ["z"]() {}\n}',
        'class A {\n  x = 1\n  ;       [k] = 2\n  ;                \n  ["z"]() {}\n}',
    ),
    # plain JavaScript that looks a little like types stays as it is
    (
        "const o = { a: 1, b: c ? d : e, f: a?.b, g: a?.[0], h: a?.() }",
        "const o = { a: 1, b: c ? d : e, f: a?.b, g: a?.[0], h: a?.() }",
    ),
    ("l: for (const x of xs) { continue l }", "l: for (const x of xs) { continue l }"),
    (
        "class A { #x = 1; get x() { return this.#x } }",
        "class A { #x = 1; get x() { return this.#x } }",
    ),
    ("const r = a < b ? 1 : 2", "const r = a < b ? 1 : 2"),
    ("x --> 0", "x --> 0"),
    # TypeScript ends a type at a line break before `[`, and `x as T` before `(`
    ("let x: T\n[1].forEach(f)", "let x  ;\n[1].forEach(f)"),
    ("const a = b as T\n(foo)()", "const a = b    ;\n(foo)()"),
    ("const a = b as T\n[1, 2].forEach(f)", "const a = b    ;\n[1, 2].forEach(f)"),
    ("const a = b as const\n[1].map(f)", "const a = b        ;\n[1].map(f)"),
    ("const a = b satisfies T\n`x`", "const a = b           ;\n`x`"),
    ("x = b as T // note\n[1]\nfoo()", "x = b    ; // note\n[1]\nfoo()"),
    ("x = b as T /* a\n */ [1]", "x = b    ; /* a\n */ [1]"),
    ("let x: number[] /* c */\n[0].map(f)", "let x         ; /* c */\n[0].map(f)"),
    # characters of several UTF-8 lengths before and after types
    (
        'const s: string = "😀é"; const t = s as string; "ñ" + t',
        'const s         = "😀é"; const t = s          ; "ñ" + t',
    ),
    (
        '/* 😀 */ let a: number = 1; let b = "é" as string; // ñ\nconst c: Array<"ü"> = ["ü"]; c!',
        '/* 😀 */ let a         = 1; let b = "é"          ; // ñ\nconst c             = ["ü"]; c;',
    ),
    ('let 𝒳: "😀" = "€"; 𝒳 as "😀"', 'let 𝒳      = "€"; 𝒳      ;'),
    # CRLF line endings stay in place
    (
        "let a: number = 1\r\nlet b = a as number\r\n",
        "let a         = 1\r\nlet b = a         ;\r\n",
    ),
]


@pytest.mark.parametrize(("typescript", "javascript"), STRIP_CASES)
def test_strip_types_exact_output(typescript: str, javascript: str) -> None:
    assert strip_types(typescript).code == javascript


@pytest.mark.parametrize(("typescript", "javascript"), STRIP_CASES)
def test_stripped_output_keeps_every_position(typescript: str, javascript: str) -> None:
    code = strip_types(typescript).code
    assert len(code) == len(typescript)
    for index, (before, after) in enumerate(zip(typescript, code, strict=True)):
        if before in "\r\n":
            assert after == before, index
        else:
            # a blank, a guard, or the `)` of an arrow function whose return type spans lines
            assert after in (before, " ", ";", ")"), index
    if code.count(")") > typescript.count(")"):
        raise AssertionError("a `)` was added rather than moved")


@pytest.mark.parametrize(("typescript", "javascript"), STRIP_CASES)
def test_quickjs_compiles_every_stripped_case(typescript: str, javascript: str) -> None:
    context = _quickjs.Context()
    function = context.eval(prepare_source(typescript).code)
    assert isinstance(function, _quickjs.Object)


def _run_body(body: str) -> Any:
    """Run JavaScript as an async function body in QuickJS; return its JSON result."""
    context = _quickjs.Context()
    function = context.eval('(async function () {"use strict";' + body + "\n})")
    context.set("__fn", function)
    context.eval(
        "globalThis.__out = undefined; globalThis.__err = undefined;"
        "__fn().then(v => { globalThis.__out = JSON.stringify({ v }) },"
        " e => { globalThis.__err = String(e) })"
    )
    while context.execute_pending_job():
        pass
    error = context.get("__err")
    if error is not None:
        raise RuntimeError(error)
    return json.loads(context.get("__out")).get("v")


def _unguarded(typescript: str, code: str) -> str:
    """The stripped code without its `;` guards, as a naive stripper would leave it."""
    return "".join(
        " " if c == ";" and t != ";" else c for t, c in zip(typescript, code, strict=True)
    )


# (TypeScript ending in an explicit `return`, the value it returns)
GUARD_CASES: list[tuple[str, Any]] = [
    # a blanked type alias between an expression and a line starting with `[`
    ("const a = [10, 20, 30]\ntype T = string\n[1, 2].forEach(x => x)\nreturn a", [10, 20, 30]),
    # a blanked interface before a line starting with `(`
    ("const b = 1\ninterface I { x: number }\n(2)\nreturn b", 1),
    # a blanked `declare` before a line starting with `[`
    ('let c = "x"\ndeclare const d: number\n[0].length\nreturn c', "x"),
    # class members blanked whole: overload, abstract member, index signature, declare field
    (
        'class A {\n  x = 2\n  m(a: string): number\n  ["m"](a: any) { return this.x }\n}\n'
        'return new A().m("")',
        2,
    ),
    (
        'abstract class B {\n  y = 3\n  abstract z(): void\n  ["w"]() { return this.y }\n}\n'
        "class B2 extends B { z() {} }\nreturn new B2().w()",
        3,
    ),
    (
        'class C {\n  v = 4\n  readonly [k: string]: unknown\n  ["u"]() { return this.v }\n}\n'
        "return new C().u()",
        4,
    ),
    (
        'class D {\n  v = 5\n  declare w: number\n  ["u"]() { return this.v }\n}\n'
        "return new D().u()",
        5,
    ),
    # a blanked modifier starting a member
    ("class E {\n  v = 6\n  private *gen() { yield this.v }\n}\nreturn [...new E().gen()]", [6]),
    # a blanked type ending a statement, before `(`, `[` and a template
    (
        "const f = (x: unknown) => x\nconst a = f as Function\n(() => 5)()\nreturn typeof a",
        "function",
    ),
    ("const a = [9, 8] as number[]\n[0].forEach(x => x)\nreturn a", [9, 8]),
    (
        "const t = (s: TemplateStringsArray) => 'tag'\n"
        "const a = t satisfies Function\n`x`\nreturn a === t",
        True,
    ),
    ("let x: unknown = 0; const b = [5, 6]\nx = b as number[]\n[1]\nreturn x", [5, 6]),
]


@pytest.mark.parametrize(("typescript", "expected"), GUARD_CASES)
def test_guards_keep_statements_apart(typescript: str, expected: Any) -> None:
    code = strip_types(typescript).code
    assert _run_body(code) == expected
    unguarded = _unguarded(typescript, code)
    assert unguarded != code
    # Without the guards the statements join: a syntax error, a runtime error or a
    # different value.
    try:
        value = _run_body(unguarded)
    except (_quickjs.JSException, RuntimeError):
        return
    assert value != expected


# (TypeScript, line, column, a word the message must hold)
ERROR_CASES: list[tuple[str, int, int, str]] = [
    ("enum Color { Red }", 1, 1, "enum"),
    ("const x = 1\n  const enum E { A }", 2, 3, "enum"),
    ('const s = "é😀"; enum E {}', 1, 17, "enum"),
    ("enum E { A", 1, 1, "enum"),
    ("namespace NS { export const a = 1 }", 1, 1, "namespace"),
    ("module M {}", 1, 1, "namespace"),
    ("class A {\n  constructor(private x: number) {}\n}", 2, 15, "parameter properties"),
    ("class A { constructor(readonly x) {} }", 1, 23, "parameter properties"),
    ("class A { constructor(public x?: number) {} }", 1, 23, "parameter properties"),
    ("class A { constructor(override x: number) {} }", 1, 23, "parameter properties"),
    ("@dec class A {}", 1, 1, "decorators"),
    ("class A {\n  @dec m() {}\n}", 2, 3, "decorators"),
    ("}); (function(){", 1, 1, "unmatched `}`"),
    ("let ü = 1\n  }); globalThis.x = 1; (function(){", 2, 3, "unmatched `}`"),
    ("x <!-- y", 1, 3, "<!--"),
    ("x\n--> y", 2, 1, "-->"),
    ("x /*\n*/ --> y", 2, 4, "-->"),
    ("-->", 1, 1, "-->"),
    # a line comment ends at a lone CR or U+2028 for QuickJS and tree-sitter alike
    ("// a\u2028}); (function(){", 1, 6, "unmatched `}`"),
    ("// a\r}); (function(){", 1, 6, "unmatched `}`"),
    ("let é = 1; '\ud800'", 1, 13, "surrogate"),
    ("const f = async <T,>\n(x: T) => x", 1, 17, "async"),
]


@pytest.mark.parametrize(("typescript", "line", "column", "word"), ERROR_CASES)
def test_refusals_point_at_the_construct(
    typescript: str, line: int, column: int, word: str
) -> None:
    with pytest.raises(TypeScriptSyntaxError) as caught:
        strip_types(typescript)
    assert (caught.value.line, caught.value.column) == (line, column)
    assert word in caught.value.message
    assert str(caught.value) == caught.value.message


def test_refusal_messages_say_what_to_write_instead() -> None:
    with pytest.raises(TypeScriptSyntaxError) as caught:
        strip_types("enum Color { Red }")
    assert 'const Color = { Red: "red" } as const' in caught.value.message
    with pytest.raises(TypeScriptSyntaxError) as caught:
        strip_types("class A { constructor(private x: number) {} }")
    assert "this.x = x" in caught.value.message


@pytest.mark.parametrize(
    "typescript",
    [
        "declare enum E { A }",
        "declare namespace N { enum E {} }",
        'declare module "m" { export enum E { A } }',
        "x --> 0",
        'const html = "<!-- note -->"',
        "const re = /<!--/",
        "// <!-- and -->",
        "/* a\n--> */ 1",
        "const t = `\n--> ${1}`",
        "// crlf\r\nlet a = 1",
        "const s = '\u2028'",
    ],
)
def test_lookalikes_are_not_refused(typescript: str) -> None:
    code = strip_types(typescript).code
    if typescript.startswith("declare"):
        # An ambient declaration is types only: all of it is blanked (a `;` guard aside).
        assert len(code) == len(typescript) and code.strip(" ;\n") == ""
    else:
        # No types here: what looks like TypeScript or HTML comments is left exactly as it is.
        assert code == typescript


@pytest.mark.parametrize(
    "source",
    [
        "let x: number = (1 +;\nlet y: string = 'a'",
        "let a: number = 1\nlet x = ;\nlet b = c as T",
        "f(enum E {})",
        "class A { @ }",
        "function f(a: number {",
    ],
)
def test_parse_errors_are_left_for_quickjs(source: str) -> None:
    stripped = strip_types(source)
    assert stripped.last_expression_start is None
    assert len(stripped.code) == len(source)
    with pytest.raises(_quickjs.JSException, match="SyntaxError"):
        _quickjs.Context().eval(prepare_source(source).code)


def test_types_outside_a_parse_error_are_still_stripped() -> None:
    source = "let a: number = 1\nlet x = ;\nlet b = c as T"
    assert strip_types(source).code == "let a         = 1\nlet x = ;\nlet b = c    ;"


def test_enum_inside_a_parse_error_is_left_for_quickjs() -> None:
    assert strip_types("f(enum E {})").code == "f(enum E {})"


@pytest.mark.parametrize(
    ("source", "start_text"),
    [
        ("1 + 1", "1 + 1"),
        ("const x = 2; x * 3", "x * 3"),
        ("const x = 2\nx * 3\n// done\n\n", "x * 3"),
        ("f()\ninterface I {}\ntype T = 1;;", "f()"),
        ("<number>\n  (41 + 1)", "(41 + 1)"),
        ("const s = 'é😀'; s as string", "s "),
        ("x!", "x;"),
        ("({ a: 1 })", "({ a: 1 })"),
    ],
)
def test_last_expression_start(source: str, start_text: str) -> None:
    stripped = strip_types(source)
    assert stripped.last_expression_start is not None
    assert stripped.code[stripped.last_expression_start :].startswith(start_text)


@pytest.mark.parametrize(
    "source",
    [
        "",
        "// only a comment",
        "const x = 1",
        "function f() {}",
        "class A {}",
        "if (a) b",
        "l: for (;;) break l",
        "return 1",
        "1\nconst x = 2",
        "1 +",
    ],
)
def test_no_last_expression(source: str) -> None:
    assert strip_types(source).last_expression_start is None


def test_guard_positions_are_characters_not_bytes() -> None:
    source = 'const é = "😀" as string\n(é)'
    code = strip_types(source).code
    assert code == 'const é = "😀"         ;\n(é)'
    assert code.index(";") == source.index("g")


def test_strip_types_is_plain_for_plain_javascript() -> None:
    source = "const a = [1, 2, 3].map((x) => x * 2)\nconsole.log(a)\na"
    stripped = strip_types(source)
    assert stripped.code == source
    assert stripped.last_expression_start == source.rindex("a")


def test_strip_types_from_many_threads_at_once() -> None:
    sources = [typescript for typescript, _ in STRIP_CASES] * 8
    expected = [javascript for _, javascript in STRIP_CASES] * 8
    with ThreadPoolExecutor(max_workers=8) as pool:
        results = list(pool.map(lambda s: strip_types(s).code, sources))
    assert results == expected


@pytest.mark.parametrize(
    "source",
    [
        'import type { Foo } from "./foo";\nconst x: Foo | null = null;\nx',
        'import type Foo from "./foo"\nnull',
        "export type Foo = number;\nexport interface Bar { a: 1 }\nnull",
    ],
)
async def test_type_only_imports_and_exports_are_stripped(source: str) -> None:
    from run_repl import run

    stripped = strip_types(source).code
    assert len(stripped) == len(source) and stripped.count("\n") == source.count("\n")
    result = await run(source)
    assert result.status == "ok" and result.value is None, result.error
