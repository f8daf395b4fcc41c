"""Strip TypeScript types from a snippet without compiling it.

Every type-only span is overwritten with spaces, so each remaining character keeps its
line and column and QuickJS's error positions stay meaningful. Constructs that would need
real compiling (enums, namespaces, parameter properties, decorators) are refused with a
`TypeScriptSyntaxError` that says what to write instead.

Nesting deeper than `MAX_NESTING_DEPTH` is refused at once, before tree-sitter
parses anything: its time grows with the square of the depth (a 256 KiB bracket
bomb took over a minute), and QuickJS itself cannot parse much deeper with the
default stack. Stripping runs in the sandbox worker, inside the run's deadline.
"""

from __future__ import annotations

import bisect
import re
import sys
import threading
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from tree_sitter import Language, Node, Parser, Query, QueryCursor, Tree

from ..errors import TypeScriptSyntaxError

__all__ = [
    "MAX_NESTING_DEPTH",
    "StrippedSource",
    "TypeScriptSyntaxError",
    "check_nesting",
    "strip_types",
]

MAX_NESTING_DEPTH = 1_000
"""How deep a snippet may nest parentheses, brackets, braces, template
substitutions (`${`) and type arguments (`<`) in all: deeper is RUN_SYNTAX_ERROR."""


@dataclass(frozen=True)
class StrippedSource:
    """JavaScript with the same length and line breaks as the TypeScript it came from.

    Type-only spans are spaces; a few of those spaces are `;` guards. The one character
    that moves is the `)` of an arrow function whose return type spans lines, because
    JavaScript allows no line break between `)` and `=>`.
    """

    code: str
    last_expression_start: int | None


# Loading the language and compiling the queries takes milliseconds: once per process.
# A parser is not safe to share between threads, so each thread keeps its own.
def _typescript_grammar() -> object:
    """tree-sitter-typescript's grammar, from its compiled module alone. Its
    package imports importlib.resources (and with it pathlib, tempfile, shutil,
    zlib, bz2, lzma, random) for query files stripping never reads: in the
    template, memory every fork of a worker would copy."""
    import importlib.machinery
    import importlib.util

    name = "tree_sitter_typescript._binding"
    try:
        module = sys.modules.get(name)
        if module is None:
            package = importlib.util.find_spec("tree_sitter_typescript")
            places = package.submodule_search_locations if package else None
            spec = importlib.machinery.PathFinder.find_spec("_binding", list(places or []))
            if spec is None or spec.loader is None:
                raise ImportError(name)
            spec.name = name
            module = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(module)
            sys.modules[name] = module
        return module.language_typescript()
    except Exception:  # laid out otherwise: the package's own way
        import tree_sitter_typescript

        return tree_sitter_typescript.language_typescript()


_LANGUAGE = Language(_typescript_grammar())
_PARSERS = threading.local()


def _parser() -> Parser:
    parser: Parser | None = getattr(_PARSERS, "parser", None)
    if parser is None:
        parser = _PARSERS.parser = Parser(_LANGUAGE)
    return parser


_QUERY = Query(
    _LANGUAGE,
    """
    (ERROR) @error
    [(type_annotation) (type_predicate_annotation) (asserts_annotation)
     (type_parameters) (type_arguments) (implements_clause)] @type
    [(interface_declaration) (type_alias_declaration) (ambient_declaration)
     (function_signature)] @statement
    (import_statement "type") @statement
    (export_statement declaration: [(interface_declaration) (type_alias_declaration)]) @statement
    (class_body [(method_signature) (abstract_method_signature) (index_signature)] @member)
    (public_field_definition "declare") @member
    (public_field_definition "abstract") @member
    [(as_expression) (satisfies_expression)] @as
    (non_null_expression "!" @token)
    (variable_declarator "!" @token)
    (public_field_definition ["!" "?"] @token)
    (method_definition "?" @token)
    (optional_parameter "?" @token)
    (public_field_definition [(accessibility_modifier) (override_modifier) "readonly"] @modifier)
    (method_definition [(accessibility_modifier) (override_modifier)] @modifier)
    (abstract_class_declaration "abstract" @modifier)
    (required_parameter pattern: (this)) @this_parameter
    (required_parameter
     [(accessibility_modifier) (override_modifier) "readonly"] @parameter_property)
    (optional_parameter
     [(accessibility_modifier) (override_modifier) "readonly"] @parameter_property)
    (enum_declaration) @enum
    [(internal_module) (module)] @namespace
    (decorator) @decorator
    [(lookup_type) (array_type)] @postfix_type
    """,
)

# Only needed when the tree has errors (see _check_braces), so it stays a separate query.
_BRACE_QUERY = Query(_LANGUAGE, '["{" "}" "${"] @brace')

_ENUM_MESSAGE = (
    "TypeScript `enum` needs compiling, and types are only stripped here: use an object, "
    'e.g. `const Color = { Red: "red" } as const`'
)
_NAMESPACE_MESSAGE = (
    "TypeScript `namespace`/`module` blocks need compiling, and types are only stripped here: "
    "use an object, e.g. `const Geometry = { area(r: number) { return Math.PI * r * r } }`"
)
_PARAMETER_PROPERTY_MESSAGE = (
    "TypeScript parameter properties (`constructor(private x: number)`) need compiling, and "
    "types are only stripped here: declare the field and assign it, e.g. "
    "`x: number; constructor(x: number) { this.x = x }`"
)
_DECORATOR_MESSAGE = (
    "decorators need compiling, and types are only stripped here: call the function "
    "yourself, e.g. `const Service = register(class Service { ... })`"
)
_UNMATCHED_BRACE_MESSAGE = (
    "unmatched `}`: the snippet runs as the body of a function, so it cannot close more "
    "braces than it opens"
)
_HTML_OPEN_MESSAGE = (
    "`<!--` starts an HTML-like comment in JavaScript, which would hide the rest of the line: "
    "put a space in it, e.g. `a < !--b`, or use `//` for a comment"
)
_HTML_CLOSE_MESSAGE = (
    "`-->` at the start of a line is an HTML-like comment in JavaScript, which would hide the "
    "rest of the line: write `x-- > y`, or use `//` for a comment"
)
_ASYNC_ARROW_MESSAGE = (
    "a line break between `async` and an arrow function's `(` makes JavaScript read `async` "
    "as a name once the type parameters are stripped: keep `async <T>(` on one line"
)
_SURROGATE_MESSAGE = "the source holds a lone surrogate character, which is not valid text"

# Statements whose end, when a blanked span reaches it, needs a `;` guard.
_STATEMENTS_ENDING_IN_EXPRESSIONS = frozenset(
    {
        "expression_statement",
        "lexical_declaration",
        "variable_declaration",
        "return_statement",
        "throw_statement",
    }
)
# Top-level statements that never hold the snippet's value.
_IGNORED_STATEMENTS = frozenset(
    {
        "comment",
        "html_comment",
        "hash_bang_line",
        "empty_statement",
        "interface_declaration",
        "type_alias_declaration",
        "ambient_declaration",
        "function_signature",
    }
)
# Leaves whose text QuickJS and tree-sitter both read as data or comment, not as code.
_TEXT_LEAVES = frozenset({"string_fragment", "escape_sequence", "comment", "regex_pattern"})
_LINE_TERMINATORS = "\n\r\u2028\u2029"
# Blanking keeps line terminators so line numbers (and ASI) stay what the user wrote.
_NOT_LINE_TERMINATOR = re.compile(f"[^{_LINE_TERMINATORS}]")
_NON_ASCII = re.compile(r"[^\x00-\x7f]")
_ASCII_SPACE = frozenset(b" \t\n\r\v\f")
_PATCH_ROUNDS = 16


def strip_types(source: str) -> StrippedSource:
    """Blank TypeScript's type-only syntax in `source`; raise for what needs compiling."""
    try:
        data = source.encode("utf-8")
    except UnicodeEncodeError as exc:
        line = source.count("\n", 0, exc.start) + 1
        column = exc.start - (source.rfind("\n", 0, exc.start) + 1) + 1
        raise TypeScriptSyntaxError(_SURROGATE_MESSAGE, line, column) from None
    check_nesting(source)
    tree, patched, captures = _parse(data)
    root = tree.root_node
    offsets = _CharOffsets(source, data)
    _check_divergent_lexing(source, root, offsets)
    if root.has_error:
        _check_braces(root, offsets)

    stripper = _Stripper(data, patched, offsets)
    stripper.run(_sorted_captures(captures))

    code = _apply(source, offsets, stripper.spans, stripper.guards)
    last = None if root.has_error else _last_expression_start(root, code, offsets)
    return StrippedSource(code=code, last_expression_start=last)


class _CharOffsets:
    """Converts tree-sitter's UTF-8 byte offsets into `str` indices, and those to positions."""

    def __init__(self, source: str, data: bytes) -> None:
        self._source = source
        self._ascii = len(data) == len(source)
        # For each non-ASCII character: its byte offset, and the extra bytes (over one per
        # character) of all non-ASCII characters up to and including it.
        self._byte_starts: list[int] = []
        self._extra: list[int] = [0]
        if not self._ascii:
            extra = 0
            for match in _NON_ASCII.finditer(source):
                self._byte_starts.append(match.start() + extra)
                extra += len(match.group().encode("utf-8")) - 1
                self._extra.append(extra)

    def char(self, byte_offset: int) -> int:
        if self._ascii:
            return byte_offset
        before = bisect.bisect_left(self._byte_starts, byte_offset)
        return byte_offset - self._extra[before]

    def error(self, message: str, byte_offset: int) -> TypeScriptSyntaxError:
        index = self.char(byte_offset)
        line_start = self._source.rfind("\n", 0, index) + 1
        line = self._source.count("\n", 0, index) + 1
        return TypeScriptSyntaxError(message, line, index - line_start + 1)


def _parse(data: bytes) -> tuple[Tree, frozenset[int], dict[str, list[Node]]]:
    """Parse, re-parsing where tree-sitter continues a type across a line break.

    TypeScript never continues a type with a `[` on a new line (`b as T` then `[1].map(f)`
    are two statements) and always ends `x as T` before a `(`, `[` or template on a new
    line; tree-sitter joins both. A `;` is put in a blank between them in a copy of the
    source used only for parsing; the output keeps the user's character there and puts the
    `;` guard at the end of the blanked type instead.
    """
    patched: set[int] = set()
    parser = _parser()
    current = data
    tree = parser.parse(current)
    captures = QueryCursor(_QUERY).captures(tree.root_node)
    for _ in range(_PATCH_ROUNDS):
        found = _find_patches(captures, current) - patched
        if not found:
            break
        buffer = bytearray(current)
        for offset in found:
            buffer[offset] = ord(";")
        patched |= found
        current = bytes(buffer)
        tree = parser.parse(current)
        captures = QueryCursor(_QUERY).captures(tree.root_node)
    return tree, frozenset(patched), captures


def _find_patches(captures: dict[str, list[Node]], data: bytes) -> set[int]:
    found: set[int] = set()
    for node in captures.get("postfix_type", []):
        bracket = next((c for c in node.children if c.type == "["), None)
        previous = bracket.prev_sibling if bracket is not None else None
        while previous is not None and previous.is_extra:
            previous = previous.prev_sibling  # a comment between the type and its `[`
        if bracket is None or previous is None:
            continue
        offset = _blank_in_gap(data, previous.end_byte, bracket.start_byte)
        if offset is not None:
            found.add(offset)
    for node in captures.get("as", []):
        end = node.end_byte
        after = _skip_blank(data, end)
        if after < len(data) and data[after] in b"([`":
            offset = _blank_in_gap(data, end, after)
            if offset is not None:
                found.add(offset)
    return found


def _skip_blank(data: bytes, offset: int) -> int:
    """The offset of the next token after whitespace and comments."""
    while offset < len(data):
        if data[offset] in _ASCII_SPACE:
            offset += 1
        elif data.startswith(b"//", offset):
            newline = data.find(b"\n", offset)
            offset = len(data) if newline < 0 else newline
        elif data.startswith(b"/*", offset):
            close = data.find(b"*/", offset + 2)
            offset = len(data) if close < 0 else close + 2
        else:
            break
    return offset


def _blank_in_gap(data: bytes, start: int, end: int) -> int | None:
    """A whitespace byte outside comments in `data[start:end]`, if the gap has a line break."""
    gap = data[start:end]
    if b"\n" not in gap and b"\r" not in gap:
        return None
    offset = start
    while offset < end:
        if data[offset] in _ASCII_SPACE:
            return offset
        if data.startswith(b"//", offset):
            newline = data.find(b"\n", offset, end)
            offset = end if newline < 0 else newline
        elif data.startswith(b"/*", offset):
            close = data.find(b"*/", offset + 2, end)
            offset = end if close < 0 else close + 2
        else:
            return None
    return None


_Capture = tuple[int, int, int, str, Node]  # start, -end, tie-breaker, name, node


def _sorted_captures(captures: dict[str, list[Node]]) -> list[_Capture]:
    flat: list[_Capture] = []
    for name, nodes in captures.items():
        for node in nodes:
            flat.append((node.start_byte, -node.end_byte, len(flat), name, node))
    # Outer nodes before the nodes they contain, so containment can be checked in one pass.
    flat.sort()
    return flat


class _Stripper:
    """Collects the byte spans to blank and the characters to put inside them."""

    def __init__(self, data: bytes, patched: frozenset[int], offsets: _CharOffsets) -> None:
        self._data = data
        self._patched = patched
        self._offsets = offsets
        self.spans: list[tuple[int, int]] = []
        # Characters put over blanked ones, by byte offset: `;` guards, and the `)` of an
        # arrow function whose return type spans lines (see _check_arrow).
        self.guards: dict[int, str] = {}

    def run(self, captures: list[_Capture]) -> None:
        # Ranges whose contents are left alone: ERROR nodes, blanked type-only nodes, and
        # type-only nodes left as they are because they hold a parse error. Node ranges
        # are nested or disjoint, so the sorted captures only ever need the innermost
        # enclosing range, kept on a stack.
        skips: list[tuple[int, int]] = []
        for start, negative_end, _, name, node in captures:
            end = -negative_end
            if start == end:
                continue  # MISSING tokens that tree-sitter invented
            while skips and skips[-1][1] <= start:
                skips.pop()
            if skips and skips[-1][0] <= start and end <= skips[-1][1]:
                continue
            own = self._handle(name, node)
            if own is not None:
                skips.append(own)

    def _handle(self, name: str, node: Node) -> tuple[int, int] | None:
        """Process one capture; return the range its contents must be skipped over."""
        start, end = node.start_byte, node.end_byte
        if name == "error":
            return start, end
        if name == "enum":
            raise self._offsets.error(_ENUM_MESSAGE, start)
        if name == "namespace":
            raise self._offsets.error(_NAMESPACE_MESSAGE, start)
        if name == "decorator":
            raise self._offsets.error(_DECORATOR_MESSAGE, start)
        if name == "parameter_property":
            raise self._offsets.error(_PARAMETER_PROPERTY_MESSAGE, start)
        if name == "postfix_type":
            return None  # only used to find re-parse patches
        if name in ("statement", "member"):
            if not node.has_error:
                self._blank(start, end)
                # An empty statement (class element) where the blanked code began, so the
                # code before it cannot run on into the code after it.
                self.guards[start] = ";"
            return start, end
        if name == "type":
            if not node.has_error:
                self._blank(start, end)
                self._guard_statement_end(node)
                parent = node.parent
                if parent is not None and parent.type == "arrow_function":
                    self._check_arrow(parent, node)
            return start, end
        if name == "as":
            return self._handle_as(node)
        if name == "token":
            self._blank(start, end)
            self._guard_statement_end(node)
            return None
        if name == "modifier":
            self._blank(start, end)
            parent = node.parent
            is_member = parent is not None and parent.type != "abstract_class_declaration"
            if is_member and parent is not None and parent.start_byte == start:
                # `x = a` then `private *gen() {}` would read as `x = a * gen() {}`.
                self.guards[start] = ";"
            return None
        if name == "this_parameter":
            following = node.next_sibling
            stop = following.end_byte if following is not None and following.type == "," else end
            self._blank(start, stop)
            return start, stop
        raise AssertionError(f"unhandled capture {name}")

    def _handle_as(self, node: Node) -> tuple[int, int] | None:
        keyword = next(
            (c for c in node.children if not c.is_named and c.type in ("as", "satisfies")), None
        )
        if keyword is None:
            return None
        start, end = keyword.start_byte, node.end_byte
        target = keyword.next_sibling
        if target is not None and target.has_error:
            return start, end
        parent = node.parent
        if (
            parent is not None
            and parent.type
            in (
                "call_expression",
                "member_expression",
                "subscript_expression",
                "non_null_expression",
            )
            and parent.start_byte == node.start_byte
        ):
            # TypeScript never calls, indexes or tags `x as T` without parentheses. Across
            # a line break _parse has split them already; on one line it is a TypeScript
            # syntax error: leave `as T` for QuickJS to report.
            return start, end
        self._blank(start, end)
        self._guard_statement_end(node)
        return start, end

    def _check_arrow(self, arrow: Node, node: Node) -> None:
        """Keep `(params) =>` legal where TypeScript allows line breaks that JS does not.

        JavaScript forbids a line break between an arrow function's `)` and `=>`, and
        between `async` and its `(`; a blanked return type or type parameters would leave
        one. A return type spanning lines takes the `)` with it: the `)` moves to the last
        character of the blanked type (the only character that moves anywhere).
        """
        parameters = arrow.child_by_field_name("parameters")
        if parameters is None or parameters.has_error:
            return
        if node.type == "type_parameters":
            keyword = arrow.children[0]
            if keyword.type == "async" and _has_line_break(
                self._data[node.start_byte : parameters.start_byte]
            ):
                raise self._offsets.error(_ASYNC_ARROW_MESSAGE, node.start_byte)
            return
        if arrow.child_by_field_name("return_type") != node:
            return
        if _has_line_break(self._data[parameters.end_byte : node.end_byte]):
            close = parameters.end_byte - 1
            self._blank(close, close + 1)
            self.guards[node.end_byte - 1] = ")"

    def _blank(self, start: int, end: int) -> None:
        self.spans.append((start, end))

    def _guard_statement_end(self, node: Node) -> None:
        """Put `;` on the last blanked character if the blank ends a statement without one.

        Otherwise `const a = b as T` then `(f)()` would become `const a = b(f)()`.
        """
        current = node
        while True:
            if current.type in _STATEMENTS_ENDING_IN_EXPRESSIONS:
                # Reached through its last child, so it has no `;` of its own.
                self.guards[node.end_byte - 1] = ";"
                return
            following = _next_non_extra(current)
            if current.type == "public_field_definition":
                if not self._is_real_semicolon(following):
                    self.guards[node.end_byte - 1] = ";"
                return
            if following is not None:
                if following.type == ";" and not self._is_real_semicolon(following):
                    self.guards[node.end_byte - 1] = ";"
                return
            parent = current.parent
            if parent is None:
                return
            current = parent

    def _is_real_semicolon(self, node: Node | None) -> bool:
        return (
            node is not None
            and node.type == ";"
            and not node.is_missing
            and node.start_byte not in self._patched
        )


def _has_line_break(data: bytes) -> bool:
    return any(mark in data for mark in (b"\n", b"\r", "\u2028".encode(), "\u2029".encode()))


def _next_non_extra(node: Node) -> Node | None:
    following = node.next_sibling
    while following is not None and following.is_extra:
        following = following.next_sibling  # comments can sit inside a statement's node
    return following


def _apply(
    source: str,
    offsets: _CharOffsets,
    spans: Iterable[tuple[int, int]],
    guards: dict[int, str],
) -> str:
    if not spans and not guards:
        return source
    pieces: list[str] = []
    position = 0
    for start_byte, end_byte in sorted(spans):
        start, end = offsets.char(start_byte), offsets.char(end_byte)
        start = max(start, position)  # spans may nest or overlap: blank each character once
        if end <= start:
            continue
        pieces.append(source[position:start])
        blanked = source[start:end]
        # Printable text holds no line terminator: the common case, without a regex.
        if blanked.isprintable():
            pieces.append(" " * len(blanked))
        else:
            pieces.append(_NOT_LINE_TERMINATOR.sub(" ", blanked))
        position = end
    pieces.append(source[position:])
    code = "".join(pieces)
    if guards:
        characters = list(code)
        for byte_offset, character in guards.items():
            # A guard's byte is the first or the last byte of a token, and either maps to
            # the character holding it.
            index = offsets.char(byte_offset)
            if characters[index] not in _LINE_TERMINATORS:
                characters[index] = character
        code = "".join(characters)
    return code


def _last_expression_start(root: Node, code: str, offsets: _CharOffsets) -> int | None:
    for statement in reversed(root.named_children):
        if statement.type in _IGNORED_STATEMENTS:
            continue
        if statement.type != "expression_statement":
            return None
        index = offsets.char(statement.start_byte)
        # Skip what blanking left at its start (a `<T>` assertion, maybe across lines), so
        # `return` is never followed by a line break.
        while index < len(code) and code[index].isspace():
            index += 1
        return index
    return None


def _check_braces(root: Node, offsets: _CharOffsets) -> None:
    """Refuse a `}` that would close the function the snippet is wrapped in.

    Valid code cannot do it; code with a parse error could, e.g. `}); (function(){`.
    """
    braces = QueryCursor(_BRACE_QUERY).captures(root).get("brace", [])
    depth = 0
    for brace in sorted(braces, key=lambda n: n.start_byte):
        if brace.is_missing:
            continue
        depth += -1 if brace.type == "}" else 1
        if depth < 0:
            raise offsets.error(_UNMATCHED_BRACE_MESSAGE, brace.start_byte)


def _check_divergent_lexing(source: str, root: Node, offsets: _CharOffsets) -> None:
    """Refuse the few spots where QuickJS would see a comment where tree-sitter sees code.

    Everything else relies on tree-sitter and QuickJS splitting the text into the same
    tokens; these could hide braces from QuickJS and let a snippet end the wrapper.
    """
    if "<!--" in source:
        for index in _find_all(source, "<!--"):
            if not _inside_text(root, source, index, 4):
                raise _error_at_char(offsets, source, _HTML_OPEN_MESSAGE, index)
    if "-->" in source:
        for index in _find_all(source, "-->"):
            line_start = max(source.rfind(c, 0, index) for c in _LINE_TERMINATORS) + 1
            before = source[line_start:index]
            # QuickJS reads `-->` as a comment when only blanks and comments precede it on
            # its line (a comment may have started on an earlier line).
            at_line_start = not before.strip() or "*/" in before
            if at_line_start and not _inside_text(root, source, index, 3):
                raise _error_at_char(offsets, source, _HTML_CLOSE_MESSAGE, index)


def _find_all(source: str, needle: str) -> Iterable[int]:
    index = source.find(needle)
    while index >= 0:
        yield index
        index = source.find(needle, index + 1)


def _byte_offset(source: str, index: int) -> int:
    return len(source[:index].encode("utf-8"))


def _leaf_at(root: Node, source: str, index: int) -> Node:
    start = _byte_offset(source, index)
    node = root.descendant_for_byte_range(start, start + 1)
    return node if node is not None else root


def _inside_text(root: Node, source: str, index: int, length: int) -> bool:
    """Whether the text at `index` is inside a string, template, regex or ordinary comment."""
    return all(_leaf_at(root, source, index + k).type in _TEXT_LEAVES for k in (0, length - 1))


def _error_at_char(
    offsets: _CharOffsets, source: str, message: str, index: int
) -> TypeScriptSyntaxError:
    return offsets.error(message, _byte_offset(source, index))


# ------------------------------------------------------------------ nesting
# One pass over the text, counting what opens and closes, skipping strings,
# comments, regular expressions and template text. A `<` may be a comparison:
# only a run of them with nothing but names between (`A<B<C<`, over lines too)
# adds up; anything else between two of them (an operator, a comma, a bracket)
# starts the count again, so comparisons never add up.
_NESTING_CHARS = re.compile(r"[(\[{)\]}<`'\"/]")
_NAMES_ONLY = re.compile(r"[\w$.\s]*")
_STRING = {q: re.compile(q + r"(?:[^" + q + r"\\\n]|\\.)*" + q + "?") for q in "'\""}
_TEMPLATE_TEXT = re.compile(r"(?:[^`\\$]|\\.|\$(?!\{))*(?P<end>`|\$\{)?", re.DOTALL)
_REGEX_BODY = re.compile(r"(?:[^/\\\[\n]|\\.|\[(?:[^\]\\\n]|\\.)*\]?)*/?")
_BEFORE_REGEX = frozenset("(,=:[!&|?{};~+-*%<>^")
_WORDS_BEFORE_REGEX = frozenset(
    "return typeof instanceof in of new delete void throw case do else yield await".split()
)
_WORD_END = re.compile(r"[A-Za-z_$][\w$]*$")
_NESTING_MESSAGE = (
    "the snippet nests deeper than {limit:,} levels here (parentheses, brackets, braces, "
    "template substitutions and type arguments in all): build deep data in a loop instead "
    "of writing it out"
)


def check_nesting(source: str, limit: int = MAX_NESTING_DEPTH) -> None:
    """Raise `TypeScriptSyntaxError` where `source` first nests deeper than `limit`.

    Linear in the length of the source; it never refuses less deeply nested code
    (it may undercount, e.g. type arguments with several parameters)."""
    # Each level: [what opened it, its run of `<`, where the run's last `<` ended].
    stack: list[list[Any]] = [["", 0, 0]]
    depth = 0
    pos = 0
    size = len(source)
    search = _NESTING_CHARS.search
    while pos < size:
        m = search(source, pos)
        if m is None:
            return
        at = m.start()
        ch = source[at]
        pos = at + 1
        if ch in "([{":
            stack.append([ch, 0, 0])
            depth += 1
        elif ch == "<":
            after = source[pos : pos + 1]
            if after == "<":
                pos += 1  # a shift
                continue
            if after == "=":
                continue
            level = stack[-1]
            if level[1] and _NAMES_ONLY.fullmatch(source, level[2], at):
                level[1] += 1
                depth += 1
            else:
                depth += 1 - level[1]
                level[1] = 1
            level[2] = pos
        elif ch in ")]}" or ch == "`":
            if ch != "`":
                if len(stack) == 1:
                    continue  # unbalanced: the parser says where
                opener, run, _end = stack.pop()
                depth -= 1 + run
                if opener != "${":
                    continue
            # In a template's text: up to its end, or into its next `${`.
            text = _TEMPLATE_TEXT.match(source, pos)
            if text is None or text["end"] is None:
                return  # unterminated: the parser says where
            pos = text.end()
            if text["end"] == "`":
                continue
            at = pos - 2
            stack.append(["${", 0, 0])
            depth += 1
        elif ch == "/":
            pos = _skip_slash(source, at)
            continue
        else:  # a quote
            string = _STRING[ch].match(source, at)
            pos = string.end() if string is not None else pos
            continue
        if depth > limit:
            raise _nesting_error(source, at, limit)


def _skip_slash(source: str, at: int) -> int:
    """Past the comment or regular expression that starts at `at`, or past a division."""
    after = source[at + 1 : at + 2]
    if after == "/":
        end = source.find("\n", at)
        return len(source) if end < 0 else end
    if after == "*":
        end = source.find("*/", at + 2)
        return len(source) if end < 0 else end + 2
    if _starts_regex(source, at):
        body = _REGEX_BODY.match(source, at + 1)
        return body.end() if body is not None else at + 1
    return at + 1


def _starts_regex(source: str, index: int) -> bool:
    """Whether the `/` at `index` starts a regular expression rather than dividing."""
    i = index - 1
    while i >= 0 and source[i] in " \t\r\n\u2028\u2029":
        i -= 1
    if i < 0 or source[i] in _BEFORE_REGEX:
        return True
    word = _WORD_END.search(source, max(0, i - 16), i + 1)
    return word is not None and word.group() in _WORDS_BEFORE_REGEX


def _nesting_error(source: str, index: int, limit: int) -> TypeScriptSyntaxError:
    line = source.count("\n", 0, index) + 1
    column = index - (source.rfind("\n", 0, index) + 1) + 1
    return TypeScriptSyntaxError(_NESTING_MESSAGE.format(limit=limit), line, column)
