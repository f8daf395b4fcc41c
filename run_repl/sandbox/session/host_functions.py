"""Host functions: the only doors of the sandbox.

An application passes nested dicts of Python callables (or objects and
modules whose public callables become a namespace). They are flattened once
into a manifest of dotted paths, which the guest mirrors as frozen namespaces
and which the parent checks every call against.
"""

from __future__ import annotations

import difflib
import functools
import hashlib
import inspect
import json
import operator
import re
import threading
import types
from collections import OrderedDict
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from ..errors import HostFunctionsError
from ..idempotency import MARK as IDEMPOTENT_MARK
from ..idempotency import is_idempotent

IDENTIFIER = re.compile(r"^[A-Za-z_$][A-Za-z0-9_$]*$")

# Globals a host namespace may not replace: every global QuickJS defines (those the
# guest runtime removes, such as InternalError and eval, too: its own code still uses
# them), the ones the sandbox adds, and words that cannot name a global binding. A
# test checks this list against the engine's and the guest's real globalThis.
RESERVED_GLOBALS = frozenset(
    """
    Object Function Array Number parseFloat parseInt Infinity NaN undefined Boolean String
    Symbol Date Promise RegExp Error AggregateError EvalError RangeError ReferenceError
    SyntaxError TypeError URIError InternalError SuppressedError globalThis JSON Math Intl
    ArrayBuffer SharedArrayBuffer Atomics Uint8Array Int8Array Uint16Array Int16Array
    Uint32Array Int32Array Float16Array Float32Array Float64Array Uint8ClampedArray
    BigUint64Array BigInt64Array DataView Map BigInt Set WeakMap WeakSet Proxy Reflect
    FinalizationRegistry WeakRef decodeURI decodeURIComponent encodeURI encodeURIComponent
    escape unescape eval isFinite isNaN queueMicrotask DOMException btoa atob performance
    Iterator DisposableStack AsyncDisposableStack WebAssembly
    console URL URLSearchParams TextEncoder TextDecoder structuredClone crypto
    arguments await yield let static
    """.split()
)
# Names JavaScript gives a meaning to on every object, refused for a namespace or a
# function at any level: Object.prototype's own (a namespace's `toString` or `valueOf`
# would be called by String(ns) or ns + ""; globalThis inherits them too), `then`
# (a namespace with it is a thenable: `await tools` would call the host, and a global
# `then` makes globalThis one), `toJSON` (JSON.stringify calls it) and `prototype`.
OBJECT_PROTOTYPE_NAMES = frozenset(
    """
    constructor __proto__ __defineGetter__ __defineSetter__ __lookupGetter__ __lookupSetter__
    hasOwnProperty isPrototypeOf propertyIsEnumerable toLocaleString toString valueOf
    """.split()
)
SPECIAL_MEMBERS = OBJECT_PROTOTYPE_NAMES | {"then", "toJSON", "prototype"}
_SPECIAL_WHY = {
    "then": "`await` calls an object's then(), so the object holding it (its namespace, or "
    "globalThis) would become a thenable that calls the host",
    "toJSON": "JSON.stringify calls an object's toJSON()",
    "__proto__": "it sets an object's prototype",
    "prototype": "it names a constructor's prototype",
}


def special_name_why(name: str) -> str | None:
    """Why `name` cannot name a namespace, a function or a global value (None: it can)."""
    if name in _SPECIAL_WHY:
        return _SPECIAL_WHY[name]
    if name in OBJECT_PROTOTYPE_NAMES:
        return (
            f"every object inherits Object.prototype.{name}, and code that converts or "
            "inspects an object calls it"
        )
    return None


# JavaScript reserved words cannot be bare identifiers.
JS_RESERVED = frozenset(
    """
    break case catch class const continue debugger default delete do else enum export extends
    false finally for function if import in instanceof new null return super switch this throw
    true try typeof var void while with implements interface package private protected public
    """.split()
)


@functools.lru_cache(maxsize=4096)
def _signature_of(fn: Callable[..., Any]) -> inspect.Signature | None:
    try:
        return inspect.signature(fn)
    except (TypeError, ValueError):
        return None


@functools.lru_cache(maxsize=4096)
def _arity_of(fn: Callable[..., Any]) -> tuple[int, int | None] | None:
    """(fewest, most) positional arguments, when plain positional parameters say it all."""
    sig = _signature_of(fn)
    if sig is None:
        return None
    low, high = 0, 0
    for p in sig.parameters.values():
        if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD):
            high += 1
            if p.default is p.empty:
                low += 1
        elif p.kind == p.VAR_POSITIONAL:
            return (low, None)
        elif p.kind == p.KEYWORD_ONLY and p.default is p.empty:
            return None  # needs a keyword the guest cannot give: let bind say so
    return (low, high)


def js_parameters(fn: Callable[..., Any]) -> str:
    """The parameters as a snippet sees them: `(accountId, limit?)`."""
    try:
        sig = _signature_of(fn)
    except TypeError:  # an unhashable callable
        sig = None
    if sig is None:
        return "(...)"
    names = [
        p.name + ("?" if p.default is not p.empty else "")
        for p in sig.parameters.values()
        if p.kind != p.VAR_KEYWORD
    ]
    return "(" + ", ".join(names) + ")"


def check_arguments(fn: Callable[..., Any], args: list[Any]) -> str | None:
    """Why these arguments cannot be passed to `fn`, or None if they can."""
    try:
        arity = _arity_of(fn)
    except TypeError:  # an unhashable callable: let the call itself decide
        return None
    if arity is not None and arity[0] <= len(args) and (arity[1] is None or len(args) <= arity[1]):
        return None  # the common case, without building a binding
    sig = _signature_of(fn)
    if sig is None:
        return None
    try:
        sig.bind(*args)
    except TypeError as exc:
        return str(exc)
    return None


@dataclass(frozen=True)
class HostFunction:
    path: str
    fn: Callable[..., Any]
    is_async: bool
    approval: Any = None  # set by @requires_approval: an ApprovalSpec
    cli_only: Any = None  # set by @requires_cli: a CliOnlySpec
    idempotent: bool = False  # set by @idempotent or @requires_approval(idempotent=True)

    @property
    def signature(self) -> str:
        sig = _signature_of(self.fn)
        return str(sig) if sig is not None else "(...)"

    @property
    def doc(self) -> str:
        return inspect.getdoc(self.fn) or ""


@dataclass(frozen=True)
class HostManifest:
    functions: dict[str, HostFunction]
    tree: dict[str, Any]  # nested dicts; a leaf (function) is True
    digest: str = field(default="")
    # Names of a module or object that are not host functions, and why (shown by `run-repl host`).
    skipped: tuple[tuple[str, str], ...] = ()

    @property
    def paths(self) -> list[str]:
        return list(self.functions)


def is_async_callable(fn: Callable[..., Any]) -> bool:
    if inspect.iscoroutinefunction(fn):
        return True
    call = getattr(fn, "__call__", None)  # noqa: B004 - a callable object's own method
    return call is not None and inspect.iscoroutinefunction(call)


def _public_callables(obj: Any) -> tuple[dict[str, Any], list[tuple[str, str]]]:
    """A module's or an object's functions, and what was left out and why.

    A module gives the functions it defines (or those its `__all__` names);
    classes, constants, private names and names imported from elsewhere are
    not host functions: a module that defines the dataclass its functions
    return is the usual shape of a host module."""
    out: dict[str, Any] = {}
    skipped: list[tuple[str, str]] = []
    names = getattr(obj, "__all__", None)
    module = isinstance(obj, types.ModuleType)
    for name in names if names is not None else dir(obj):
        if not isinstance(name, str) or name.startswith("_"):
            continue
        try:
            value = getattr(obj, name)
        except Exception:
            skipped.append((name, "could not be read"))
            continue
        if isinstance(value, type):
            skipped.append((name, "a class"))
            continue
        if module and names is None and getattr(value, "__module__", obj.__name__) != obj.__name__:
            # A module's namespace is what it defines, not what it imported.
            if callable(value):
                skipped.append((name, f"imported from {getattr(value, '__module__', '?')}"))
            continue
        if callable(value) or isinstance(value, Mapping):
            out[name] = value
        elif not isinstance(value, types.ModuleType):
            skipped.append((name, f"a constant ({type(value).__name__})"))
    return out, skipped


def _check_name(name: Any, where: str, top: bool) -> str:
    if not isinstance(name, str) or not IDENTIFIER.match(name):
        raise HostFunctionsError(
            f"host_functions: {name!r}{where} is not a JavaScript identifier; "
            "use letters, digits, _ and $ (not starting with a digit)."
        )
    if top and name in JS_RESERVED:
        # `documents.delete` is fine; a global named `delete` could never be written.
        raise HostFunctionsError(
            f"host_functions: {name!r} is a JavaScript reserved word; use it inside a namespace."
        )
    why = special_name_why(name)
    if why is not None:
        raise HostFunctionsError(
            f"host_functions: {name!r}{where} cannot name a namespace or a function: {why}. "
            "Rename it."
        )
    if top and name in RESERVED_GLOBALS:
        raise HostFunctionsError(
            f"host_functions: {name!r} would replace the guest's own global {name}; "
            "put it in a namespace (e.g. {'app': {...}})."
        )
    return name


def build_manifest(host_functions: Any) -> HostManifest:
    """Flatten host functions into a manifest; raise HostFunctionsError if malformed."""
    functions: dict[str, HostFunction] = {}
    skipped: list[tuple[str, str]] = []

    def walk(node: Any, prefix: str, depth: int) -> dict[str, Any]:
        if depth > 16:
            raise HostFunctionsError(
                f"host_functions: {prefix} is nested more than 16 levels deep."
            )
        if isinstance(node, Mapping):
            entries = dict(node)
        else:
            entries, left_out = _public_callables(node)
            skipped.extend((f"{prefix}.{n}" if prefix else n, why) for n, why in left_out)
        tree: dict[str, Any] = {}
        for name, value in entries.items():
            where = f" (in {prefix})" if prefix else ""
            _check_name(name, where, top=not prefix)
            path = f"{prefix}.{name}" if prefix else name
            if callable(value) and not isinstance(value, type | types.ModuleType):
                functions[path] = HostFunction(
                    path,
                    value,
                    is_async_callable(value),
                    getattr(value, "__run_repl_approval__", None),
                    getattr(value, "__run_repl_cli__", None),
                    is_idempotent(value),
                )
                tree[name] = True
            elif isinstance(value, Mapping | types.ModuleType) or (
                not callable(value)
                and value is not None
                and not isinstance(value, str | int | float | bool | bytes)
            ):
                tree[name] = walk(value, path, depth + 1)
            else:
                raise HostFunctionsError(
                    f"host_functions: {path} is a {type(value).__name__}, not a function or a "
                    "namespace of functions."
                )
        return tree

    if host_functions is None:
        return HostManifest({}, {}, _digest([]))
    if callable(host_functions) and not isinstance(host_functions, Mapping | types.ModuleType):
        raise HostFunctionsError(
            "host_functions must be a dict of namespaces (e.g. {'store': {'listOrders': fn}}), "
            "a module or an object, not a single function."
        )
    tree = walk(host_functions, "", 0)
    return HostManifest(functions, tree, _digest(sorted(functions)), tuple(skipped))


MANIFESTS_KEPT = 16  # hosts whose manifest is kept (each entry holds its host alive)
_manifests: OrderedDict[int, tuple[Any, list[Any], HostManifest]] = OrderedDict()
_manifests_lock = threading.Lock()


def manifest_of(host_functions: Any) -> HostManifest:
    """`build_manifest(host_functions)`, built once per host: the same object, holding
    the same namespaces and functions (each checked by identity, with its marks), gets
    the manifest it got before. A host whose functions changed (an upstream's tool list
    did: its namespace was replaced in place) gets a fresh one. Hosts made of objects
    other than dicts and modules (whose members Python makes anew on each read) are
    built each time."""
    parts = _parts(host_functions)
    if parts is None:
        return build_manifest(host_functions)
    key = id(host_functions)
    with _manifests_lock:
        kept = _manifests.get(key)
        if kept is not None and kept[0] is host_functions and _same(kept[1], parts):
            _manifests.move_to_end(key)
            return kept[2]
    manifest = build_manifest(host_functions)
    with _manifests_lock:
        # The entry holds the host and every part it compares, so no id it names is reused.
        _manifests[key] = (host_functions, parts, manifest)
        _manifests.move_to_end(key)
        while len(_manifests) > MANIFESTS_KEPT:
            _manifests.popitem(last=False)
    return manifest


def _same(a: list[Any], b: list[Any]) -> bool:
    return len(a) == len(b) and all(map(operator.is_, a, b))


_END = object()  # closes a namespace's parts, so a member moved between levels is a change


def _parts(root: Any) -> list[Any] | None:
    """What a manifest is made from, in order: each namespace, its names and members
    and each function's marks; None when a member is an object other than a dict or a
    module (Python makes its methods anew on each read: nothing to compare)."""
    out: list[Any] = []

    def walk(node: Any, depth: int) -> bool:
        if depth > 16:
            return False  # too deep: build_manifest says so
        module = isinstance(node, types.ModuleType)
        if not module and type(node) is not dict and not isinstance(node, Mapping):
            return False
        out.append(node)
        if module:
            names = getattr(node, "__all__", None)
            # Its names in a tuple: a list changed in place would be the same object.
            out.extend((names, *names) if names is not None else (None,))
        for name, value in (vars(node) if module else node).items():
            if module and (not isinstance(name, str) or name.startswith("_")):
                continue  # never a host function (and __builtins__ is a dict of its own)
            out.append(name)
            out.append(value)
            # In build_manifest's order: a callable is a function, whatever else it is.
            if callable(value) and not isinstance(value, type | types.ModuleType):
                out.append(getattr(value, "__run_repl_approval__", None))
                out.append(getattr(value, "__run_repl_cli__", None))
                out.append(getattr(value, IDEMPOTENT_MARK, None))
            elif type(value) is dict or isinstance(value, Mapping):
                if not walk(value, depth + 1):
                    return False
            elif isinstance(value, types.ModuleType):
                if not module and not walk(value, depth + 1):
                    return False  # (a module's own imports are no part of its namespace)
            elif not module and not isinstance(value, str | int | float | bool | bytes | type):
                return False  # an object as a namespace: its members are made on each read
        out.append(_END)
        return True

    if root is None or not walk(root, 0):
        return None
    return out


def _digest(paths: list[str]) -> str:
    return hashlib.sha256(json.dumps(paths).encode()).hexdigest()


def did_you_mean(paths: list[str], wanted: str, limit: int = 3) -> list[str]:
    """Close host paths for a mistyped one: same parent first (case-insensitive,
    close spelling, substring), else where a member of that name lives. (The
    guest's namespaces give the snippet these suggestions; this is the parent's
    copy for a call that reached it anyway.)"""
    parent, _, name = wanted.rpartition(".")
    prefix = f"{parent}." if parent else ""
    lower = name.lower()
    siblings = sorted({p[len(prefix) :].split(".")[0] for p in paths if p.startswith(prefix)})
    by_lower = {s.lower(): s for s in siblings}
    close = difflib.get_close_matches(lower, list(by_lower), n=limit, cutoff=0.75)
    close += [s for s in by_lower if len(lower) >= 3 and (lower in s or s in lower)]
    out = list(dict.fromkeys(prefix + by_lower[c] for c in close))[:limit]
    if not out:
        out = [p for p in paths if p.rsplit(".", 1)[-1].lower() == lower][:limit]
    return out
