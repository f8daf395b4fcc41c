"""run-repl: run untrusted JavaScript and TypeScript against your own Python functions.

from run_repl import run
result = await run("return await store.listOrders('cus_1')", {"store": {"listOrders": list_orders}})
"""

from .sandbox import *  # noqa: F403 - the engine's public API is the package's
from .sandbox import __all__ as _engine_all

__all__ = list(_engine_all)
__version__ = "0.1.0"
