"""The guest runtime's JavaScript, as QuickJS evaluates it before any snippet.

`guest/web/*.js` (one file per Web/Node API, in name order: shared helpers
first) run in a scope of their own and export a few names; `guest/prelude.js`
sees only those, builds the sandbox's globals, hardens the realm and returns
the dispatcher the worker drives.

Imported by the worker as a plain module (the standard library only).
"""

from __future__ import annotations

from pathlib import Path

GUEST_DIR = Path(__file__).with_name("guest")
WEB_EXPORTS = (
    "URL, URLSearchParams, TextEncoder, TextDecoder, inspect, formatLogArgs, structuredCloneValue"
)


def web_source() -> str:
    """web/*.js in order: the Web/Node APIs the guest gets."""
    parts = sorted((GUEST_DIR / "web").glob("*.js"))
    return "\n".join(p.read_text(encoding="utf-8") for p in parts)


def runtime_source(line_base: int) -> str:
    """The whole guest runtime, `line_base` lines down (so its stack frames are told
    from the snippet's by line number alone)."""
    prelude = (GUEST_DIR / "prelude.js").read_text(encoding="utf-8")
    return (
        "\n" * line_base
        + '(function () { "use strict";\n'
        + f"const {{ {WEB_EXPORTS} }} = (function () {{\n{web_source()}\n"
        + f"return {{ {WEB_EXPORTS} }};\n}})();\n"
        + prelude
        + "\n})()"
    )
