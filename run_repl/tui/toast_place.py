"""Where toasts go on a screen whose foot holds key hints: just above the hints.

Textual docks a screen's toasts at its bottom edge (one row up, for a footer); a
dialog drawn over that edge has its own hints there, which toasts would cover
for as long as they last. The rack is lifted to end just above them, measured
from the dialog as laid out (its height is a share of the screen's)."""

from __future__ import annotations

from typing import Any

from textual.screen import Screen
from textual.widget import Widget


def keep_toasts_above(screen: Screen[Any], widget: Widget) -> None:
    """Lift `screen`'s toasts so they end on the row above `widget` (once laid out)."""
    region = widget.region
    if not region.height:
        return  # not laid out yet (or hidden): the next resize places them
    below = max(screen.size.height - region.y, 0)
    for rack in screen.query("ToastRack"):
        rack.styles.margin = (0, 0, below, 0)
