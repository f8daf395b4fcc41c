"""Host functions whose input or output is a one-time secret stay in the CLI.

A snippet's result, its logs and the store are all places a secret must
never reach (a grant key, an invite key, fresh credentials). Mark such a
function with `@requires_cli(command=...)`: a snippet that calls it is
refused before the function runs, with SECRET_REQUIRES_CLI and one next
action, `run_cli_command`, naming the command a person runs instead.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

F = TypeVar("F", bound=Callable[..., Any])

DEFAULT_WHY = (
    "It returns or consumes a one-time secret: the command line prints it once to the person "
    "who will hand it on, and nothing of it reaches the run's result, logs or store."
)


@dataclass(frozen=True)
class CliOnlySpec:
    # The exact command, or a function of the call's arguments that writes it.
    command: str | Callable[..., str]
    why: str = DEFAULT_WHY


def requires_cli(*, command: str | Callable[..., str], why: str = DEFAULT_WHY) -> Callable[[F], F]:
    """Refuse this host function in snippets; point to `command` instead.

    @requires_cli(command=lambda project: f"myapp keys create --project {project}")
    def create_key(project: str) -> str: ...
    """

    def mark(f: F) -> F:
        try:
            f.__run_repl_cli__ = CliOnlySpec(command, why)  # type: ignore[attr-defined]  # a mark on the function
        except AttributeError:
            raise TypeError(f"requires_cli cannot mark {f!r}: wrap it in a function") from None
        return f

    return mark
