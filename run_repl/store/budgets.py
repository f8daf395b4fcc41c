"""What a store keeps, and for how long: the same budgets on every backend."""

from __future__ import annotations

from collections.abc import Iterable
from collections.abc import Set as AbstractSet

DEFAULT_MAX_BYTES = 1 << 30  # 1 GiB of stored values
DEFAULT_MAX_AGE_S = 30 * 24 * 3600  # 30 days
DEFAULT_HISTORY_BYTES = 128 << 20  # the runs table, all runs together
DEFAULT_ENVELOPE_BYTES = 1 << 20  # one run's envelope in the history
PREVIEW_BYTES = 16 << 10  # what a history listing loads of a larger envelope
TOUCH_EVERY_S = 60  # eviction goes by last use; this precision spares a write per page
INLINE_VALUE_BYTES = 8 << 10
"""A value (or a run's logs) whose encoded chunks take at most this is kept in its own
`results` row (one INSERT, no chunk rows, no COPY). A value shown whole in a reply (200
pretty lines) takes about 1 to 6 KiB, so nearly every such value is inline; past one
PostgreSQL page (8 KiB) the row would be moved out of line by TOAST anyway, and a COPY's
fixed cost is small beside the data."""


REFUSED = "refused:"  # a store counter's name: runs refused before they started, by code


def low_water(budget: int) -> int:
    """What an eviction brings a budget's total down to: a sixteenth under it, so
    evictions come in batches, not one row on every write once the budget is full."""
    return budget - budget // 16


def over_budget(
    oldest_first: Iterable[tuple[str, int]],
    total: int,
    budget: int,
    *,
    keep: str | AbstractSet[str],
    already: Iterable[str] = (),
) -> list[str]:
    """What else goes so that `total` bytes fit `budget`: entries (key, size), oldest
    first, never `keep` (a key, or the keys just written together); those `already`
    going count as freed, not chosen again."""
    spared = {keep} if isinstance(keep, str) else keep
    gone = set(already)
    chosen: list[str] = []
    for key, size in oldest_first:
        if total <= budget:
            break
        if key in spared:
            continue
        total -= size
        if key not in gone:
            chosen.append(key)
    return chosen


__all__ = [
    "DEFAULT_ENVELOPE_BYTES",
    "DEFAULT_HISTORY_BYTES",
    "DEFAULT_MAX_AGE_S",
    "DEFAULT_MAX_BYTES",
    "INLINE_VALUE_BYTES",
    "PREVIEW_BYTES",
    "REFUSED",
    "TOUCH_EVERY_S",
    "low_water",
    "over_budget",
]
