"""What one run is, as one value: the spec the session runs and the token signs,
and the hooks that hear of it as it goes."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ..limits import Limits
from ..process.source import PreparedSource
from ..result import CallRecord, LogLine
from .host_functions import HostManifest

LogCallback = Callable[[LogLine], Any]
CallCallback = Callable[[CallRecord], Any]

__all__ = ["CallCallback", "LogCallback", "RunHooks", "RunSpec"]


@dataclass(frozen=True)
class RunSpec:
    """One run: the snippet, the host it sees, its limits, and who it is (a resumed
    run keeps the logical id, seed and clock of the run it continues)."""

    source: str
    manifest: HostManifest
    limits: Limits
    logical_run_id: str
    seed: list[int]  # the guest's Math.random
    clock_ms: int  # the guest's Date.now() at the start
    values_wire: str | None = None  # the run's `values`, encoded (scope_values)


@dataclass(frozen=True)
class RunHooks:
    """Who hears of a run as it goes, and what may stop it: each optional."""

    on_log: LogCallback | None = None
    on_call: CallCallback | None = None
    cancel: asyncio.Event | None = None
    rewrite_log: Callable[[str, PreparedSource], str] | None = None  # positions in logs
