"""The IDE's keys as the person has them: every binding id, the keys `[keymap]` gives
each, the warning for an id that names no binding, and the words for a hint.

Hints that name a key ("F5 runs the snippet") ask here, so after `"app.run" =
"ctrl+g"` they say ctrl+g, never a key that no longer does it.
"""

from __future__ import annotations

import difflib
import importlib
import pkgutil
from collections.abc import Iterator, Mapping

from textual.binding import Binding
from textual.dom import DOMNode

# Keys many terminals never send as themselves (ctrl+enter arrives as enter): a hint
# names the others when there are others.
UNRELIABLE = frozenset({"ctrl+enter"})


def _subclasses(cls: type) -> Iterator[type]:
    sub: type
    for sub in cls.__subclasses__():
        yield sub
        yield from _subclasses(sub)


def default_keys() -> dict[str, str]:
    """Every binding id of the IDE (its app, panels and screens) and its default keys."""
    from . import components, screens

    for package in (components, screens):
        for module in pkgutil.iter_modules(package.__path__):
            importlib.import_module(f"{package.__name__}.{module.name}")
    found: dict[str, str] = {}
    for cls in _subclasses(DOMNode):
        if not cls.__module__.startswith("run_repl.tui"):
            continue
        for binding in cls.__dict__.get("BINDINGS", []):
            if isinstance(binding, Binding) and binding.id:
                found.setdefault(binding.id, binding.key)
    return found


def keymap_problems(keymap: Mapping[str, str], known: Mapping[str, str]) -> list[str]:
    """One warning per `[keymap]` id that names no binding, with the closest real ones."""
    problems = []
    for binding_id in keymap:
        if binding_id in known:
            continue
        close = difflib.get_close_matches(binding_id, list(known), n=3, cutoff=0.6)
        hint = (
            f"did you mean {' or '.join(repr(c) for c in close)}?"
            if close
            else "F1 lists every binding id"
        )
        problems.append(f'[keymap] "{binding_id}" is no binding id, so it was ignored: {hint}')
    return problems


def key_text(keys: str) -> str:
    """Keys as a hint says them: `F5 or ctrl+j` for "ctrl+enter,ctrl+j,f5"."""
    names = [k.strip() for k in keys.split(",") if k.strip()]
    reliable = [k for k in names if k not in UNRELIABLE] or names
    # Function keys first: they work in every terminal and read at a glance.
    reliable.sort(key=lambda k: not (k[:1] == "f" and k[1:].isdigit()))
    return " or ".join(k.upper() if k[:1] == "f" and k[1:].isdigit() else k for k in reliable)


class KeyHints:
    """The keys of each binding id, with the person's `[keymap]` over the defaults."""

    def __init__(self, keymap: Mapping[str, str], known: Mapping[str, str] | None = None) -> None:
        self.known = dict(default_keys() if known is None else known)
        self.keymap = dict(keymap)

    def keys(self, binding_id: str, *, first: bool = False) -> str:
        """`F5 or ctrl+j`: the keys that do `binding_id` now (`first`: the first of them,
        for a hint with little room)."""
        text = key_text(self.keymap.get(binding_id) or self.known.get(binding_id, ""))
        return text.split(" or ")[0] if first else text

    def problems(self) -> list[str]:
        return keymap_problems(self.keymap, self.known)
