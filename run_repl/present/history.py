"""Past runs as rows whose columns line up, for `history`, `:history` and the IDE."""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass

from ..store.records import RunRecord
from . import formats
from .results import STATUS_STYLE
from .styled import Line, line, plain


def format_when(started_at: float, now: float | None = None) -> str:
    """Today's runs by time alone (`14:03:27`); older ones with their date (`2025-01-31 14:03`)."""
    local = time.localtime(started_at)
    today = time.localtime(now if now is not None else time.time())
    if local[:3] == today[:3]:
        return time.strftime("%H:%M:%S", local)
    return time.strftime("%Y-%m-%d %H:%M", local)


def resume_fragments(run: RunRecord, *, ids: bool = True) -> Line:
    """What a resume links: `resumes run_a` (it resumed a paused run), `resumed as
    run_b: ok` (a paused run, and how the run that resumed it ended); without `ids`,
    `a resume` and `resumed: ok`. Empty for a run that is neither."""
    out: Line = []
    if run.resumed_from:
        out.append(("dim", f"resumes {run.resumed_from}" if ids else "a resume"))
    if run.resumed_as:
        if out:
            out.append(("dim", " · "))
        said = f"resumed as {run.resumed_as}" if ids else "resumed"
        if run.resumed_status:
            out += [
                ("dim", f"{said}: "),
                (STATUS_STYLE.get(run.resumed_status, ""), run.resumed_status),
            ]
        else:  # that run is no longer in the history
            out.append(("dim", said))
    return out


@dataclass(frozen=True)
class HistoryRow:
    """One run as the columns of a history listing (all text)."""

    when: str
    id: str
    status: str
    code: str
    duration: str
    title: str
    resume: str = ""
    """What a resume links (`resume_fragments`): `resumes run_a`, `resumed as run_b: ok`."""

    @classmethod
    def of(cls, run: RunRecord, now: float | None = None) -> HistoryRow:
        return cls(
            when=format_when(run.started_at, now),
            id=run.id,
            status=run.status,
            code=run.error_code or "",
            duration=formats.format_ms(run.duration_ms),
            title=run.title,
            resume=plain(resume_fragments(run)),
        )


def history_lines(
    runs: Sequence[RunRecord], *, ids: bool = True, now: float | None = None
) -> list[Line]:
    """One line a run, columns padded to the widest cell: when, id, status, error
    code, duration (right-aligned), what a resume links, and the source's first line."""
    rows = [HistoryRow.of(r, now) for r in runs]
    if not rows:
        return []
    resumes = [resume_fragments(r, ids=ids) for r in runs]
    w_resume = max(len(plain(x)) for x in resumes)
    w_when = max(len(r.when) for r in rows)
    w_id = max(len(r.id) for r in rows)
    w_status = max(len(r.status) for r in rows)
    w_code = max(len(r.code) for r in rows)
    w_duration = max(len(r.duration) for r in rows)
    out = []
    for r, resume in zip(rows, resumes, strict=True):
        cells: list[str | tuple[str, str]] = [("dim", r.when.ljust(w_when)), "  "]
        if ids:
            cells += [r.id.ljust(w_id), "  "]
        cells += [(STATUS_STYLE.get(r.status, ""), r.status.ljust(w_status)), "  "]
        if w_code:
            cells += [("error", r.code.ljust(w_code)), "  "]
        cells += [r.duration.rjust(w_duration), "  "]
        if w_resume:
            cells += [*resume, " " * (w_resume - len(plain(resume))) + "  "]
        cells.append(r.title)
        out.append(line(*cells))
    return out
