"""What a store keeps, and for how long: the same budgets on every backend."""

from __future__ import annotations

DEFAULT_MAX_BYTES = 1 << 30  # 1 GiB of stored values
DEFAULT_MAX_AGE_S = 30 * 24 * 3600  # 30 days
DEFAULT_HISTORY_BYTES = 128 << 20  # the runs table, all runs together
DEFAULT_ENVELOPE_BYTES = 1 << 20  # one run's envelope in the history
PREVIEW_BYTES = 16 << 10  # what a history listing loads of a larger envelope
TOUCH_EVERY_S = 60  # eviction goes by last use; this precision spares a write per page

__all__ = [
    "DEFAULT_ENVELOPE_BYTES",
    "DEFAULT_HISTORY_BYTES",
    "DEFAULT_MAX_AGE_S",
    "DEFAULT_MAX_BYTES",
    "PREVIEW_BYTES",
    "TOUCH_EVERY_S",
]
