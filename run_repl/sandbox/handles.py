"""Handles: objects a host function returns that are not data.

A scoped client, a connection, a query builder: the snippet gets a handle and
calls its public methods within the same run (`const p = await
api.project("prj_1"); await p.functions.list()`). Which objects become
handles is explicit: instances of a class marked `@handle`. A handle lives in
the parent, for one run: the guest holds an id and a frozen list of members;
returning or logging it gives its label, never its insides, and it cannot
reach another run.

On resume, the call that made a handle is answered from the record, like any
finished call; if a live call then needs the object, the call that made it is
made again (functions that return handles should be free of side effects:
they look something up and wrap it).
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar

from .session.host_functions import SPECIAL_MEMBERS

T = TypeVar("T", bound=type)

MAX_HANDLE_DEPTH = 4  # levels of handle-valued attributes shown as nested members
HANDLE_PATH_PREFIX = "@"  # a call on a handle travels as "@<id>.member.path"


def handle(cls: T) -> T:
    """Mark a class: its instances, returned by a host function, become handles.

    @handle
    class Project:
        def __init__(self, client, project_id): ...
        async def deploy(self, ref: str) -> dict: ...
    """
    if not isinstance(cls, type):
        raise TypeError("@handle marks a class (its instances become handles)")
    cls.__run_repl_handle__ = True  # type: ignore[attr-defined]  # a mark on the class
    return cls


def is_handle(obj: Any) -> bool:
    return getattr(type(obj), "__run_repl_handle__", False) is True


@dataclass(frozen=True)
class HandleRef:
    """A handle the guest passed back as an argument: resolved to its object before the call."""

    id: int


def members(obj: Any, depth: int = 0) -> dict[str, Any]:
    """The handle's public methods (True) and handle-valued attributes (nested)."""
    tree: dict[str, Any] = {}
    for name in dir(type(obj)) if depth <= MAX_HANDLE_DEPTH else ():
        if name.startswith("_") or name in SPECIAL_MEMBERS:
            # Never a member: `await` would call a handle's then(), JSON.stringify its
            # toJSON(), String() its toString().
            continue
        static = inspect.getattr_static(obj, name, None)
        if isinstance(static, property):
            continue  # reading a property would run it now; methods run when called
        try:
            value = getattr(obj, name)
        except Exception:
            continue
        if callable(value) and not isinstance(value, type):
            tree[name] = True
        elif is_handle(value) and value is not obj:
            tree[name] = members(value, depth + 1)
    for name, value in vars(obj).items() if hasattr(obj, "__dict__") else ():
        if (
            not name.startswith("_")
            and name not in SPECIAL_MEMBERS
            and is_handle(value)
            and value is not obj
            and name not in tree
        ):
            tree[name] = members(value, depth + 1)
    return tree


def handle_member(obj: Any, path: str) -> Callable[..., Any] | None:
    """The callable at `path` (dotted) under a handle, if it is one of its members."""
    node: Any = obj
    parts = path.split(".")
    for i, part in enumerate(parts):
        if not part or part.startswith("_") or part in SPECIAL_MEMBERS:
            return None
        try:
            node = getattr(node, part)
        except Exception:
            return None
        last = i == len(parts) - 1
        if not last and not is_handle(node):
            return None
    return node if callable(node) and not isinstance(node, type) else None


def split_handle_path(path: str) -> tuple[int, str] | None:
    """("@3.functions.list") -> (3, "functions.list"), or None for a plain path."""
    if not path.startswith(HANDLE_PATH_PREFIX):
        return None
    head, _, rest = path[1:].partition(".")
    if not head.isdigit() or not rest:
        return None
    return int(head), rest


@dataclass
class HandleTable:
    """The handles of one run: id -> object, and how each was made."""

    next_id: int = 1
    objects: dict[int, Any] = field(default_factory=dict)
    labels: dict[int, str] = field(default_factory=dict)
    made: list[int] = field(default_factory=list)  # ids registered by the encode in progress
    expected: list[int] | None = None  # when remaking: the ids the record gave, in order
    label_prefix: str = ""  # the call whose result is being encoded

    def register(self, obj: Any, where: str) -> tuple[int, str, dict[str, Any]]:
        """A new handle for `obj`, found at `where` in a call's result."""
        if self.expected is not None:
            if not self.expected:
                raise HandleMismatch("the call made more handles than it did the first time")
            hid = self.expected.pop(0)
        else:
            hid = self.next_id
            self.next_id += 1
        label = self.label_prefix + ("" if where == "$" else where[1:])
        self.objects[hid] = obj
        self.labels[hid] = label
        self.made.append(hid)
        return hid, label, members(obj)

    def label(self, hid: int) -> str:
        return self.labels.get(hid, f"handle #{hid}")


class HandleMismatch(Exception):
    """Remaking a handle on resume gave other handles than the record has."""
