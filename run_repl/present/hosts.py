"""A host's functions in words: `run-repl host`, the line REPL's `:host`."""

from __future__ import annotations

from collections.abc import Sequence

from ..host.loader import FunctionInfo
from .styled import Line, line, styled


def function_meta(info: FunctionInfo) -> str:
    """One line for a completion menu: `crm.getAccount(id) — Get one account. (needs approval)`."""
    meta = info.js_signature
    if info.summary:
        meta += f" — {info.summary}"
    if info.needs_approval:
        meta += " (needs approval)"
    return meta


def function_lines(
    host_name: str, functions: Sequence[FunctionInfo], *, full: bool = True
) -> list[Line]:
    """Each function's JS signature and flags; with `full`, its Python signature and
    whole docstring too, else the docstring's first line."""
    out = [line(("bold", f"host: {host_name}"), ("dim", f"  ({len(functions)} functions)"))]
    for info in functions:
        flags: list[str | tuple[str, str]] = []
        if info.is_async:
            flags.append(("dim", "  async"))
        if info.needs_approval:
            flags.append(("warn", "  needs approval"))
        if full:
            out.append([])
        out.append(line("  ", ("path", info.js_signature), *flags))
        if full:
            out.append(styled("dim", f"      python: {info.python_signature}"))
            out += [line(f"      {t}") for t in info.doc.splitlines()]
        elif info.summary:
            out.append(styled("dim", f"      {info.summary}"))
    return out
