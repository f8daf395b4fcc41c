"""Every limit of a run, named, with its default and the failure it leads to."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

MIB = 1 << 20


class Limits(BaseModel):
    """Per-run limits. A run's own `Limits` override the runner's field by field:
    only the fields it sets.

    | field                           | default  | when exceeded                              |
    |---------------------------------|----------|--------------------------------------------|
    | timeout_ms                      | 30 000   | RUN_TIMEOUT (wall clock, whole run)        |
    | host_call_grace_ms              | 5 000    | a call still running this long after the   |
    |                                 |          | deadline is `settled: false` (a cancel     |
    |                                 |          | does not wait: async calls are cancelled)  |
    | memory_bytes                    | 64 MiB   | RUN_MEMORY_EXCEEDED                        |
    | stack_bytes                     | 1 MiB    | a catchable RangeError in the guest        |
    | max_source_bytes                | 256 KiB  | RUN_SOURCE_TOO_LARGE                       |
    | max_value_bytes                 | 4 MiB    | RUN_VALUE_TOO_LARGE                        |
    | max_host_calls                  | 10 000   | RUN_BRIDGE_LIMIT                           |
    | max_host_calls_in_flight        | 256      | RUN_BRIDGE_LIMIT                           |
    | max_sync_calls_in_flight        | 32       | further sync host calls wait their turn    |
    | max_host_argument_bytes         | 1 MiB    | RUN_ARGUMENT_TOO_LARGE (one call)          |
    | max_host_argument_bytes_per_run | 64 MiB   | RUN_ARGUMENT_TOO_LARGE (all calls)         |
    | max_host_result_bytes           | 4 MiB    | RUN_HOST_RESULT_TOO_LARGE                  |
    | max_values_bytes                | 4 MiB    | `values=` refused at the call              |
    | max_log_lines                   | 500      | later lines dropped, `logs_dropped`        |
    | max_log_line_bytes              | 2 048    | the line is cut                            |
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    timeout_ms: int = Field(30_000, ge=1, le=24 * 3600 * 1000)
    host_call_grace_ms: int = Field(5_000, ge=0, le=3600 * 1000)
    memory_bytes: int = Field(64 * MIB, ge=1 * MIB, le=64 * 1024 * MIB)
    stack_bytes: int = Field(1 * MIB, ge=64 * 1024, le=64 * MIB)
    max_source_bytes: int = Field(256 * 1024, ge=1, le=64 * MIB)
    max_value_bytes: int = Field(4 * MIB, ge=1, le=4096 * MIB)
    max_host_calls: int = Field(10_000, ge=0, le=100_000_000)
    max_host_calls_in_flight: int = Field(256, ge=1, le=1_000_000)
    max_sync_calls_in_flight: int = Field(32, ge=1, le=1024)
    max_host_argument_bytes: int = Field(1 * MIB, ge=16, le=1024 * MIB)
    max_host_argument_bytes_per_run: int = Field(64 * MIB, ge=16, le=64 * 1024 * MIB)
    max_host_result_bytes: int = Field(4 * MIB, ge=16, le=1024 * MIB)
    max_values_bytes: int = Field(4 * MIB, ge=16, le=1024 * MIB)
    max_log_lines: int = Field(500, ge=0, le=10_000_000)
    max_log_line_bytes: int = Field(2048, ge=16, le=16 * MIB)


def near_memory_limit(stats: dict[str, Any], memory_bytes: int) -> bool:
    """Whether the sandbox got close to its memory limit (its heap now, or the
    process's growth at its peak: a heap freed after the failure shows there)."""
    heap = stats.get("heap_bytes") or 0
    growth = stats.get("memory_growth_bytes") or 0
    return heap >= memory_bytes * 0.85 or growth >= memory_bytes * 0.75
