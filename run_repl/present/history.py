"""Past runs as rows whose columns line up, for `history`, `:history` and the IDE."""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass

from ..store.records import RunRecord
from . import formats
from .results import STATUS_STYLE
from .styled import Line, line


def format_when(started_at: float, now: float | None = None) -> str:
    """Today's runs by time alone (`14:03:27`); older ones with their date (`2025-01-31 14:03`)."""
    local = time.localtime(started_at)
    today = time.localtime(now if now is not None else time.time())
    if local[:3] == today[:3]:
        return time.strftime("%H:%M:%S", local)
    return time.strftime("%Y-%m-%d %H:%M", local)


@dataclass(frozen=True)
class HistoryRow:
    """One run as the columns of a history listing (all text)."""

    when: str
    id: str
    status: str
    code: str
    duration: str
    title: str

    @classmethod
    def of(cls, run: RunRecord, now: float | None = None) -> HistoryRow:
        return cls(
            when=format_when(run.started_at, now),
            id=run.id,
            status=run.status,
            code=run.error_code or "",
            duration=formats.format_ms(run.duration_ms),
            title=run.title,
        )


def history_lines(
    runs: Sequence[RunRecord], *, ids: bool = True, now: float | None = None
) -> list[Line]:
    """One line a run, columns padded to the widest cell: when, id, status, error
    code, duration (right-aligned), and the source's first line."""
    rows = [HistoryRow.of(r, now) for r in runs]
    if not rows:
        return []
    w_when = max(len(r.when) for r in rows)
    w_id = max(len(r.id) for r in rows)
    w_status = max(len(r.status) for r in rows)
    w_code = max(len(r.code) for r in rows)
    w_duration = max(len(r.duration) for r in rows)
    out = []
    for r in rows:
        cells: list[str | tuple[str, str]] = [("dim", r.when.ljust(w_when)), "  "]
        if ids:
            cells += [r.id.ljust(w_id), "  "]
        cells += [(STATUS_STYLE.get(r.status, ""), r.status.ljust(w_status)), "  "]
        if w_code:
            cells += [("error", r.code.ljust(w_code)), "  "]
        cells += [r.duration.rjust(w_duration), "  ", r.title]
        out.append(line(*cells))
    return out
