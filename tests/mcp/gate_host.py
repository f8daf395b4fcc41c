"""A host for the MCP server's tests: calls that wait at a gate the test opens.

`gate.wait(name)` marks `entered-NAME` in the gate directory (RUN_REPL_TEST_GATE),
holding the server's pid, then waits until a file named `open` is there. If its
run is stopped meanwhile it sees `context.cancelled` (a deadline: the call gets the
grace to finish) or its task is cancelled (a cancel: CancelledError, at once), as a
host function should; either way it marks `cancelled-NAME` and stops. So a test
knows, without timing anything, that a run is in flight, holds it there as long as
it likes, and sees it stopped.
"""

import asyncio
import os
import sys
from pathlib import Path

from run_repl import get_host_function_context, requires_approval

GATE = Path(os.environ["RUN_REPL_TEST_GATE"])


async def wait(name: str) -> str:
    """Wait at the gate until the test opens it; returns `name`."""
    cancelled = get_host_function_context().cancelled
    (GATE / f"entered-{name}").write_text(str(os.getpid()))
    try:
        while not (GATE / "open").exists():
            if cancelled.is_set():
                (GATE / f"cancelled-{name}").touch()
                return "stopped"
            await asyncio.sleep(0.01)
    except asyncio.CancelledError:
        (GATE / f"cancelled-{name}").touch()
        raise
    return name


@requires_approval(message=lambda name: f"Launch {name}?")
def launch(name: str) -> dict:
    """Launch something (asks a person first)."""
    (GATE / f"launched-{name}").touch()
    return {"launched": name}


def noisy(text: str) -> str:
    """Print to stdout and stderr, as careless host code does; returns `text`."""
    print(f"host says {text}")
    print(f"host warns {text}", file=sys.stderr)
    return text


HOSTS = {"gate": {"wait": wait, "noisy": noisy}, "rocket": {"launch": launch}}
