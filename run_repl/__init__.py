"""run-repl: run untrusted JavaScript and TypeScript against your own Python functions.

from run_repl import run
result = await run("return await store.listOrders('cus_1')", {"store": {"listOrders": list_orders}})

The engine's names are loaded on first use, so the `run-repl` command starts
(and can be stopped with Ctrl-C, quietly) before any of it is imported.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .sandbox import *  # noqa: F403 - the engine's public API is the package's

__version__ = "0.1.0"


def __getattr__(name: str) -> Any:
    # import_module, not `from . import`: that asks this module for the name first
    sandbox = importlib.import_module(".sandbox", __name__)
    if name == "__all__":
        return list(sandbox.__all__)
    if name in sandbox.__all__:
        value = getattr(sandbox, name)
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    sandbox = importlib.import_module(".sandbox", __name__)
    return sorted({*globals(), *sandbox.__all__})
