"""`run-repl serve`: a headless executor, resuming decided runs of its host.

    run-repl serve --host team.hosts:HOSTS --store postgresql://db/runrepl

For a team that wants approved calls to run on its own machines (where the host's
code, credentials and network are) and not on the laptop of whoever decides: a
decision made anywhere (`run-repl approvals approve`, the IDE's inbox) is recorded
and this process resumes the run (`store/approvals/resumer.py`), one line on stdout
per resume. The first SIGTERM or Ctrl-C stops it taking new work: it leaves the
registry at once and lets the resumes in progress end; a second one interrupts them
(their approvals then `unfinished`, never run again), as Ctrl-C interrupts any resume.
"""

from __future__ import annotations

import argparse
import asyncio
import signal
import sys
from collections.abc import Callable
from typing import Any

from .present import ExitCode, line, styled
from .present.sanitize import safe
from .present.shell import Output
from .store.approvals.resumer import MAX_RESUMES, Resumed
from .workspace import Workspace


def serve_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--max-resumes",
        type=int,
        default=MAX_RESUMES,
        metavar="N",
        help=f"runs resumed at once (default {MAX_RESUMES})",
    )


async def serve_resumes(
    ws: Workspace, *, max_resumes: int = MAX_RESUMES, write: Callable[[str], Any] = print
) -> int:
    """Resume decided runs of `ws`'s host until SIGTERM or SIGINT (see the module)."""
    loop = asyncio.get_running_loop()
    stop = asyncio.Event()

    def heard(done: Resumed) -> None:
        write(safe(done.line()))

    resumer = ws.resumer("serve", max_resumes=max_resumes, on_resumed=heard)
    ws.executor_id = resumer.id
    task = asyncio.ensure_future(resumer.run(stop))

    def on_signal() -> None:
        if not stop.is_set():
            print(
                "run-repl serve: stopping: taking nothing new; resumes in progress end "
                "(again to interrupt them)",
                file=sys.stderr,
                flush=True,
            )
            stop.set()
        else:
            task.cancel()

    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, on_signal)
    print(
        f"run-repl serve: resuming decided runs of host {ws.host.name!r} as {resumer.label} "
        f"({resumer.id}), store {ws.store.location}; SIGTERM or Ctrl-C stops",
        file=sys.stderr,
        flush=True,
    )
    try:
        await task
    except asyncio.CancelledError:
        return ExitCode.CANCELLED
    finally:
        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.remove_signal_handler(sig)
    return ExitCode.OK


def serve_command(ws: Workspace, args: argparse.Namespace, output: Output) -> int:
    if not ws.persistent:
        output.err.line(
            styled(
                "error",
                "run-repl serve: the store is in memory, which no other process can reach, so "
                "there is nothing to resume: give it the store others decide in (--data-dir "
                "or --store).",
            )
        )
        return ExitCode.STORE
    if args.max_resumes < 1:
        output.err.line(styled("error", "run-repl serve: --max-resumes must be 1 or more"))
        return ExitCode.USAGE

    def write(text: str) -> None:
        output.out.line(line(text))
        output.out.stream.flush()

    return asyncio.run(serve_resumes(ws, max_resumes=args.max_resumes, write=write))


__all__ = ["serve_arguments", "serve_command", "serve_resumes"]
