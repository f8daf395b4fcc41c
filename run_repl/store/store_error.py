"""The one error every store raises when it cannot be used, with what to do next."""

from __future__ import annotations

from typing import Literal

from ..sandbox.errors import RunReplError

StoreProblem = Literal["busy", "damaged", "full", "unreachable", "denied", "newer", "unusable"]


class StoreError(RunReplError, RuntimeError):
    """The store cannot be used (busy, damaged, full, unreachable, refused, from a
    newer version, unwritable).

    `problem` says which, for code; the message says what to do, for people. A
    message about a server never holds its password (see `store_url.mask`)."""

    code = "STORE_UNUSABLE"

    def __init__(self, message: str, problem: StoreProblem = "unusable") -> None:
        super().__init__(message)
        self.problem = problem
        self.code = f"STORE_{problem.upper()}"  # STORE_BUSY, STORE_DAMAGED, ...


__all__ = ["StoreError", "StoreProblem"]
