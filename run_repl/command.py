"""The `run-repl` command's entry point: Ctrl-C from the first instant ends it quietly.

Importing run-repl takes a second or two on a busy machine (pydantic, the engine,
Textual); a Ctrl-C then would print a traceback of whatever was being imported.
This module imports nothing of its own at its top, so the console script gets
here at once, and the rest is imported inside the guard.

A SIGINT that arrives while Python runs a weakref callback or a finalizer (importlib's
module-lock callback, during those imports) cannot be raised there: Python reports it
as "unraisable" and drops it, and the command would go on as if no Ctrl-C came. The
hook below takes it back and delivers it again, where it can be raised.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence

CANCELLED = 130  # 128 + SIGINT, as shells report Ctrl-C (ExitCode.CANCELLED)


UnraisableHook = Callable[["sys.UnraisableHookArgs"], object]


def _redeliver_interrupts(previous: UnraisableHook) -> UnraisableHook:
    """An unraisable hook: a dropped KeyboardInterrupt becomes a SIGINT again; anything
    else is reported as before.

    The signal is sent again only once the hook has returned: sent from within it, its
    handler would raise in the hook, where Python drops it once more. So a thread sends
    it when the hook's last statement has run (Python switches threads only between
    statements that call something, and the hook's last one calls nothing)."""

    def hook(unraisable: sys.UnraisableHookArgs) -> None:
        if unraisable.exc_type is None or not issubclass(unraisable.exc_type, KeyboardInterrupt):
            previous(unraisable)
            return
        import signal
        import threading
        import time

        if not callable(signal.getsignal(signal.SIGINT)):
            return  # SIGINT ignored, or not Python's to handle: nothing to send again
        main_thread = threading.main_thread().ident
        hook_returned = _Flag()

        def send_again() -> None:
            while not hook_returned.value:
                time.sleep(0.0005)
            # A real signal, not a simulated one: it also wakes a blocking system call.
            signal.pthread_kill(main_thread or 0, signal.SIGINT)

        threading.Thread(target=send_again, name="run-repl interrupt", daemon=True).start()
        hook_returned.value = True

    return hook


class _Flag:
    """A bare attribute: setting it calls no code (an Event's `set` would)."""

    value = False


def main(argv: Sequence[str] | None = None) -> int:
    """`run-repl`: see `run-repl --help`. Ctrl-C at any point exits 130, saying nothing."""
    previous = sys.unraisablehook
    sys.unraisablehook = _redeliver_interrupts(previous)
    try:
        from .cli import main as cli_main

        return cli_main(argv)
    except KeyboardInterrupt:
        return CANCELLED
    finally:
        sys.unraisablehook = previous
