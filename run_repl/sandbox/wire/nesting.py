"""How deeply a value nests: one limit for every value that crosses the sandbox.

The limit is ours, not a library's: pydantic refuses to serialize a tree past
255 levels (the result's own fields included), the MCP SDK reads no message
past 200, and Python's `json` stops near 1000 levels on 3.11 but reads far
deeper on 3.12+. Without a limit of our own, a guest's deeply nested value
made an ok result that a store or `--json` then failed to write, or an MCP
client never read (it waited for the answer until its timeout), and the same
snippet behaved differently on two Pythons. With it, such a value fails the
run, with its path, everywhere.
"""

from __future__ import annotations

import json
import re
from itertools import chain
from typing import Any

from ..errors import ErrorCode, RunReplError, next_actions

# Levels of arrays and objects in one value (a scalar is level 0). Far below the
# libraries' own limits, because front ends wrap values: pydantic serializes 255
# levels and the MCP SDK's JSON reader (jiter) reads 200, message included.
MAX_DEPTH = 128
ARGUMENTS_DEPTH = MAX_DEPTH + 1  # a call's list of arguments, each a value
PAYLOAD_DEPTH = MAX_DEPTH + 2  # an approval's payload holds them: {"args": [value, ...]}
# Values of one argument (or payload) written out for a person to read: parts a
# value shares are written once per use, so a few bytes can stand for 2 ** 40.
MAX_SHOWN_NODES = 100_000
_IDENT = re.compile(r"[A-Za-z_$][A-Za-z0-9_$]*")  # as the guest writes paths
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")  # in a Python str, every surrogate is lone
_SHOWN_STEPS = 8  # of a too-deep path, at each end


class ValueTooDeep(RunReplError, ValueError):
    """A value nests more than MAX_DEPTH levels; `path` says where."""

    code = ErrorCode.RUN_VALUE_NOT_SERIALIZABLE

    def __init__(self, path: str, limit: int = MAX_DEPTH) -> None:
        super().__init__(
            f"The value at {path} nests deeper than {limit} levels of arrays and objects, "
            "which run-repl does not keep or show: return it flattened."
        )
        self.path = path
        self.limit = limit

    @property
    def next_actions(self) -> list[dict[str, Any]]:
        return next_actions(self.code, path=self.path, hint=flatten_hint(self.limit))


def flatten_hint(limit: int = MAX_DEPTH) -> str:
    """The next step for a value nested too deep."""
    return f"Return the data flattened: at most {limit} levels of arrays and objects."


def check_depth(value: Any, limit: int = MAX_DEPTH, *, text: str | None = None) -> None:
    """Raise ValueTooDeep if `value` (decoded JSON: lists, dicts, scalars) nests
    more than `limit` levels. With `text`, the JSON it was decoded from, a
    value with too few brackets to be that deep is passed without a walk."""
    if text is not None and text.count("[") + text.count("{") <= limit:
        return
    # Level by level, containers only, each level's elements in one comprehension
    # (a thousand rows of objects: about 0.4 ms).
    level = [value] if isinstance(value, list | dict) else []
    for _ in range(limit):
        dicts = [v.values() for v in level if type(v) is dict]
        lists = [v for v in level if type(v) is list] if len(dicts) < len(level) else []
        below = [
            x
            for x in chain(chain.from_iterable(lists), chain.from_iterable(dicts))
            if type(x) is list or type(x) is dict
        ]
        if not below:
            return
        level = below
    raise ValueTooDeep(_path_below(value, limit), limit)


def expands_past(value: Any, budget: int = MAX_SHOWN_NODES) -> bool:
    """Whether `value` written out as JSON has more than `budget` values (a cycle:
    endless). Stops counting at the budget, so it costs at most that much."""
    stack, seen = [value], 0
    while stack:
        v = stack.pop()
        seen += 1
        if seen > budget:
            return True
        if isinstance(v, dict):
            stack.extend(v.values())
        elif isinstance(v, list | tuple | set | frozenset):
            stack.extend(v)
    return False


def cycle_in(value: Any) -> tuple[str, str] | None:
    """Where `value` refers back to itself, if it does: (the path of the back-reference,
    the path of the container it points back to), e.g. ("$[0].self", "$[0]"). Each
    container is walked once, however often it is shared."""
    done: set[int] = set()
    open_: dict[int, str] = {}  # containers on the way down, by id: their paths
    stack: list[tuple[Any, str, bool]] = [(value, "$", False)]
    while stack:
        v, where, leaving = stack.pop()
        if leaving:
            del open_[id(v)]
            done.add(id(v))
            continue
        if not isinstance(v, list | tuple | dict) or id(v) in done:
            continue
        if id(v) in open_:
            return where, open_[id(v)]
        open_[id(v)] = where
        stack.append((v, where, True))
        pairs = v.items() if isinstance(v, dict) else enumerate(v)
        for k, x in reversed(list(pairs)):
            if isinstance(x, list | tuple | dict):
                step = key_step(k) if isinstance(v, dict) else f"[{k}]"
                stack.append((x, where + step, False))
    return None


def _path_below(value: Any, limit: int) -> str:
    """The path of the first container more than `limit` levels down."""
    # Depth first, each entry with its path as a chain of steps (shared, not copied).
    stack: list[tuple[Any, int, tuple[Any, ...]]] = [(value, 1, ())]
    while stack:
        v, level, way = stack.pop()
        if level > limit:
            steps: list[str] = []
            while way:
                step, way = way
                steps.append(step)
            steps.reverse()
            return _path_text(steps)
        pairs = enumerate(v) if isinstance(v, list) else v.items()
        children = [(k, x) for k, x in pairs if isinstance(x, list | dict)]
        for k, x in reversed(children):
            step = f"[{k}]" if isinstance(v, list) else key_step(k)
            stack.append((x, level + 1, (step, way)))
    return "$"  # not reached when check_depth found it too deep


_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"|[\[\]{},:]')


def loads(text: str, limit: int = MAX_DEPTH) -> Any:
    """json.loads, refused with ValueTooDeep past `limit` levels, whichever
    Python: where json itself gives up first (near 1000 levels on 3.11), the
    path is found in the text."""
    try:
        value = json.loads(text)
    except RecursionError:
        raise ValueTooDeep(path_in_text(text, limit), limit) from None
    check_depth(value, limit, text=text)
    return value


def path_in_text(text: str, limit: int = MAX_DEPTH) -> str:
    """The path of the first container more than `limit` levels down in a JSON
    text (which need not be readable by json: too deep for it)."""
    # Each open container: [is an object, its current key or index].
    open_: list[list[Any]] = []
    expect_key = False
    for token in _TOKEN.finditer(text):
        t = token.group()
        if t in "[{":
            open_.append([t == "{", 0])
            if len(open_) > limit:
                return _path_text([key_step(k) if o else f"[{k}]" for o, k in open_[:-1]])
            expect_key = t == "{"
        elif t in "]}":
            open_.pop()
        elif t == ",":
            if open_ and open_[-1][0]:
                expect_key = True
            elif open_:
                open_[-1][1] += 1
        elif t == ":":
            expect_key = False
        elif expect_key and open_:
            open_[-1][1] = json.loads(t)
    return "$"


def _path_text(parts: list[str]) -> str:
    """A path of steps ("[0]", ".name"), its middle left out when long."""
    if len(parts) > 2 * _SHOWN_STEPS:
        parts[_SHOWN_STEPS:-_SHOWN_STEPS] = [f"…({len(parts) - 2 * _SHOWN_STEPS} more)…"]
    return "$" + "".join(parts)


def key_step(key: Any) -> str:
    """One key of a path as the guest writes it: `.name`, else the key as
    JSON.stringify writes it (characters as they are, a lone surrogate escaped)."""
    key = str(key)
    if _IDENT.fullmatch(key):
        return f".{key}"
    text = json.dumps(key, ensure_ascii=False)
    return "[" + _LONE_SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", text) + "]"
