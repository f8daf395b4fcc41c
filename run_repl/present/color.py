"""Whether output gets colours: one rule for every front end.

Off when NO_COLOR is set to anything non-empty (no-color.org), when
TERM=dumb, or when the stream is not a terminal; FORCE_COLOR (non-empty)
turns it on even in a pipe, as many tools accept.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any


def color_enabled(stream: Any = None, environ: Mapping[str, str] | None = None) -> bool:
    """Colours for `stream` (None: for a terminal this process does not hold as a stream)."""
    env = os.environ if environ is None else environ
    if env.get("NO_COLOR"):
        return False
    if env.get("FORCE_COLOR"):
        return True
    if env.get("TERM") == "dumb":
        return False
    if stream is None:
        return True
    isatty = getattr(stream, "isatty", None)
    try:
        return bool(isatty and isatty())
    except (OSError, ValueError):  # a closed stream
        return False
