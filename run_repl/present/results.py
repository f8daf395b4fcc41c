"""A run's result in words: status, logs, calls, the value, an error, what waits.

Each function returns `Line`s (see `styled`), so the CLI, the line REPL and
the IDE say the same things the same way and only their looks differ.
"""

from __future__ import annotations

import unicodedata
from collections import Counter
from typing import Any

from ..sandbox.result import CallRecord, Interruption, LogLine, RunErrorInfo, RunResult
from . import formats
from .approvals import approval_message, argument_lines, message_fragments
from .paging import item_lines, items_header, value_document
from .sanitize import safe
from .styled import Line, line, styled

STATUS_STYLE = {"ok": "ok", "error": "error", "interrupted": "warn", "cancelled": "error"}
EXCERPT_WIDTH = 160  # a longer source line shows this much around the error's column


def status_line(status: str, duration_ms: float | None) -> Line:
    """`ok in 12.3 ms`, `error in 3.0 ms`, `interrupted in 1.20 s`."""
    out = styled(STATUS_STYLE.get(status, "bold"), status)
    if duration_ms is not None:
        out.append(("dim", f" in {formats.format_ms(duration_ms)}"))
    return out


def result_status_line(result: RunResult) -> Line:
    return status_line(result.status, result.duration_ms)


# ---------------------------------------------------------------- logs
LOG_GUTTER = "│ "
"""Starts each row of a log after its first (under its text, past the time and level)."""


def log_rows(log: LogLine) -> list[Line]:
    """`    12.3 ms warn  text`: when (since the run started), level, text; a log with
    newlines gets a row for each, each after the first marked with LOG_GUTTER. Logs are
    printed just above an approval's question, so a snippet's newline must not start a
    row that reads as the host's (`  call: ...`)."""
    first, *rest = log.text.replace("\r\n", "\n").split("\n")
    head = line(
        ("dim", f"{formats.format_ms(log.at_ms):>10}"),
        " ",
        (f"log.{log.level}", f"{log.level:<5}"),
        " ",
        first,
    )
    pad = " " * 17  # the time (10), a space, the level (5), a space
    return [head, *(line(("dim", pad + LOG_GUTTER), text) for text in rest)]


def log_line(log: LogLine) -> Line:
    """The log as one Line, its rows (`log_rows`) joined by newlines: for a widget that
    draws a newline as a new row."""
    rows = log_rows(log)
    out = list(rows[0])
    for row in rows[1:]:
        out.append(("", "\n"))
        out.extend(row)
    return out


def log_lines(result: RunResult) -> list[Line]:
    """The result's inline log lines, then where the rest are and what was dropped."""
    out = [row for x in result.logs for row in log_rows(x)]
    more = result.logs_total - len(result.logs) - result.logs_dropped
    if more > 0 and result.logs_ref:
        out.append(
            styled(
                "dim",
                f"… {formats.plural(more, 'more log line')}: run-repl expand {result.logs_ref}"
                f" --offset {len(result.logs)}",
            )
        )
    out += dropped_logs_lines(result)
    return out


def dropped_logs_lines(result: RunResult) -> list[Line]:
    if not result.logs_dropped:
        return []
    return [
        styled(
            "dim", f"… {formats.plural(result.logs_dropped, 'log line')} dropped (max_log_lines)"
        )
    ]


# ---------------------------------------------------------------- calls
def call_state(call: CallRecord) -> Line:
    """How a call stands: `running`, `waiting for approval`, `ok`, its error code, or
    `unsettled` (the run ended while it ran); then `replayed` and the approval
    decision when they apply."""
    if call.settled is False:
        # The run ended while it was still running: whether its effect happened is unknown.
        return styled("error bold", "unsettled: its effect is unknown")
    if call.ok is None:
        return styled("warn", "waiting for approval" if call.decision == "pending" else "running")
    out = styled("ok", "ok") if call.ok else styled("error", str(call.error_code or "error"))
    if call.replayed:
        out += [("", " "), ("dim", "replayed")]
    if call.decision in ("approved", "denied", "refused"):
        out += [("", " "), ("decision", call.decision)]
    return out


def call_line(call: CallRecord) -> Line:
    """`#1  crm.getAccount("acc_1")  0.4 ms  ok`, and how long it waited for approval."""
    out = line(f"#{call.seq}  ", ("path", call.path), call.args_preview, "  ")
    if call.duration_ms is not None:
        out.append(("", f"{formats.format_ms(call.duration_ms)}  "))
    out += call_state(call)
    if call.wait_ms:
        out.append(("dim", f"  waited {formats.format_ms(call.wait_ms)} for approval"))
    return out


CALLS_MADE_SHOWN = 20
"""The latest calls an approval's detail lists whole; earlier ones are counted by function."""
_CALLS_MADE_NAMED = 4  # functions named in the count of earlier calls, the most made first


def calls_made_lines(
    calls: list[Any], shown: int = CALLS_MADE_SHOWN, total: int | None = None
) -> list[Line]:
    """The calls a paused run made before the one asking (read from its stored
    envelope): the latest `shown` whole, the earlier counted by function. A run
    that made thousands of calls then still reads at a glance, and draws at once
    (only the calls shown are read whole). Records that cannot be read are left out.

    `total` is how many calls the run made (its stats): the history keeps only the
    first ones of a long list, and then says so rather than pass them off as all."""
    done = [
        raw
        for raw in calls
        if isinstance(raw, dict)
        and isinstance(raw.get("path"), str)
        and raw.get("decision") != "pending"
    ]
    latest: list[CallRecord] = []
    split = len(done)
    while split > 0 and len(latest) < shown:
        split -= 1
        try:
            latest.append(CallRecord.model_validate(done[split]))
        except ValueError:
            continue
    latest.reverse()
    earlier = done[:split]
    later = total - len(calls) if total is not None else 0  # made, but not in the history
    if later > 0:
        header = (
            f"  calls already made (the history kept the first {len(calls):,}"
            f" of the run's {total:,} calls):"
        )
    else:
        header = f"  calls already made ({len(earlier) + len(latest):,}):"
    out = [styled("dim", header)]
    if not latest and later <= 0:
        out.append(styled("dim", "    none: this call is the run's first"))
        return out
    if earlier:
        counts = Counter(str(c["path"]) for c in earlier)
        ranked = sorted(counts.items(), key=lambda item: (-item[1], item[0]))
        named = ", ".join(f"{safe(path)} ×{n:,}" for path, n in ranked[:_CALLS_MADE_NAMED])
        rest = len(ranked) - _CALLS_MADE_NAMED
        more = f" and {formats.plural(rest, 'more function')}" if rest > 0 else ""
        out.append(styled("dim", f"    … {len(earlier):,} earlier: {named}{more}"))
    out += [[("", "    "), *call_line(c)] for c in latest]
    if later > 0:
        out.append(styled("dim", f"    … {later:,} later, which the history did not keep"))
    return out


def calls_lines(result: RunResult) -> list[Line]:
    if not result.calls:
        return []
    return [styled("dim", f"calls ({len(result.calls)}):")] + [
        [("", "  "), *call_line(c)] for c in result.calls
    ]


# ---------------------------------------------------------------- errors
def _pad_to(prefix: str) -> str:
    """Blanks as wide on screen as `prefix`: tabs kept, wide characters two cells."""
    out = []
    for ch in prefix:
        if ch == "\t":
            out.append("\t")
        elif unicodedata.combining(ch):
            continue
        elif unicodedata.east_asian_width(ch) in ("W", "F"):
            out.append("  ")
        else:
            out.append(" ")
    return "".join(out)


def _cells(text: str) -> int:
    """The most cells `text` takes on screen: a tab up to eight, wide characters two."""
    width = 0
    for ch in text:
        if ch == "\t":
            width += 8
        elif not unicodedata.combining(ch):
            width += 2 if unicodedata.east_asian_width(ch) in ("W", "F") else 1
    return width


def _window(pieces: list[str], at: int, room: int) -> tuple[int, int]:
    """The pieces [start, end) to show, each piece a character as shown, so that they
    and an ellipsis on each cut side fit `room` cells, around piece `at` (its own
    cell and the caret's kept on screen, and about as much before it as after)."""
    widths = [_cells(p) for p in pieces]
    caret = 1 if at >= len(pieces) else 0  # the caret past the end takes a cell of its own
    if sum(widths) + caret <= room:
        return 0, len(pieces)
    budget = max(room - 2, 1)  # both ellipses
    start = end = min(at, len(pieces))
    used = caret
    if end < len(pieces):
        used, end = used + widths[end], end + 1
    # About half the room before the column, then the rest after it, then before again.
    while start > 0 and used + widths[start - 1] <= budget // 2:
        start, used = start - 1, used + widths[start - 1]
    while end < len(pieces) and used + widths[end] <= budget:
        end, used = end + 1, used + widths[end]
    while start > 0 and used + widths[start - 1] <= budget:
        start, used = start - 1, used + widths[start - 1]
    return start, end


def snippet_excerpt(
    source: str, line_no: int, column: int | None, width: int | None = None
) -> list[Line]:
    """The source line `line_no`, and a caret under `column` (both 1-based, characters).

    The line is shown as the terminal will show it (unsafe characters escaped),
    so the caret lands under the character it points at; a long line is cut
    to a window around the column: EXCERPT_WIDTH cells of it, or what fits in
    `width` cells with the gutter (a panel that would wrap the line otherwise,
    and a wrapped line puts the caret under the wrong character)."""
    lines = source.split("\n")
    if not 1 <= line_no <= len(lines):
        return []
    text = lines[line_no - 1].rstrip("\r")
    col = min(max(column or 0, 0), len(text) + 1)
    gutter = f"  {line_no} | "
    room = EXCERPT_WIDTH + 2 if width is None else max(width - len(gutter), 8)
    # Only the characters near the column can be shown (each takes a cell or more,
    # but for combining marks): a 256 KiB line is not escaped whole for a window.
    at = max(col - 1, 0)
    near = max(at - 4 * room, 0)
    pieces = [safe(ch) for ch in text[near : at + 4 * room]]
    start, end = _window(pieces, at - near, room)
    shown = "".join(pieces[start:end])
    lead = "…" if near + start > 0 else ""
    tail = "…" if near + end < len(text) else ""
    out = [line(("dim", gutter), lead, shown, tail)]
    if column:
        pad = _pad_to(lead + "".join(pieces[start : at - near]))
        out.append(line(("dim", " " * (len(gutter) - 2) + "| "), pad, ("caret", "^")))
    return out


def error_lines(
    error: RunErrorInfo, source: str | None = None, *, width: int | None = None
) -> list[Line]:
    """`CODE at line L, column C: message`, the snippet's line with a caret (cut to
    `width` cells, when given), close names, the guest's stack (for an exception),
    and each next action."""
    where = ""
    if error.line:
        where = f" at line {error.line}" + (f", column {error.column}" if error.column else "")
    message = error.message.split("\n")
    out = [line(("error bold", f"{error.code}{where}"), f": {message[0]}")]
    if error.guest_code:
        out[0] += [("dim", f"  (the snippet's own code: {error.guest_code})")]
    out += [line(f"  {m}") for m in message[1:]]
    if source and error.line:
        out += snippet_excerpt(source, error.line, error.column, width)
    if error.did_you_mean and not says_suggestions(error.message, error.did_you_mean):
        out.append(line("  did you mean: ", ("hint", ", ".join(error.did_you_mean))))
    if error.stack and str(error.code) == "RUN_EXCEPTION":
        out += [styled("dim", "  " + s.strip()) for s in error.stack.split("\n")[1:] if s.strip()]
    out += next_action_lines(error.next_actions)
    return out


def next_action_lines(actions: list[Any]) -> list[Line]:
    out = []
    for action in actions:
        data = action.model_dump() if hasattr(action, "model_dump") else dict(action)
        why = data.get("why") or ""
        command = f" `{data['command']}`" if data.get("command") else ""
        # The action's type is for programs (the envelope has it); people read what to do.
        out.append(line(("hint", "  next: "), why, command))
    return out


def says_suggestions(message: str, names: list[str]) -> bool:
    """Whether an error's message already offers every one of these names."""
    return "did you mean" in message.lower() and all(n in message for n in names)


# ---------------------------------------------------------------- interruptions
def interruption_lines(it: Interruption) -> list[Line]:
    """What waits for a decision: the call, its message, every argument whole."""
    out = [
        line(("warn bold", "waiting for approval: "), ("path", it.path), ("dim", f"  (id {it.id})"))
    ]
    out.append(line("  ", *message_fragments(approval_message(it.payload, it.path), "")))
    out += argument_lines(it.args, indent="  ")
    return out


# ---------------------------------------------------------------- values
def value_lines(result: RunResult) -> list[Line]:
    """The value for reading: whole when it was small, else the window's header,
    the object's other fields (`rest`) and the window's items."""
    if result.status != "ok":
        return []
    window = result.value_window
    if window is None:
        if result.value_kind == "undefined":
            return [styled("dim", "undefined")]
        return [line(t) for t in formats.pretty_json(result.value).split("\n")]
    out = [styled("dim", items_header(window.path, 0, len(window.items), result.total or 0))]
    if window.rest:
        out.append(line(("dim", "rest: "), formats.json_text(window.rest)))
    out += omitted_lines(window.rest_omitted)
    for item in window.items:
        out += [line(t) for t in item_lines(item, window.path)]
    return out


def value_text(result: RunResult) -> str | None:
    """What `run` writes to stdout: the value as one JSON document (for a big value,
    the value as far as the window goes, in the value's own shape), or None
    when there is no value (an error, an interruption, undefined)."""
    document = value_document(result)
    return None if document is None else formats.pretty_json(document[0])


def window_note(result: RunResult) -> list[Line]:
    """For a windowed value: how much of it was shown, and the command for the rest."""
    window = result.value_window
    if result.status != "ok" or window is None:
        return []
    total = result.total or 0
    shown = result.shown if result.shown is not None else len(window.items)
    out = [
        styled("dim", f"value: {items_header(window.path, 0, shown, total)} (the rest is stored)")
    ]
    out += omitted_lines(window.rest_omitted, ref=result.value_ref)
    if shown < total:
        out.append(more_items_hint(result.value_ref, shown, total))
    return out


def omitted_lines(names: list[str] | None, ref: str | None = None) -> list[Line]:
    """Fields beside a window's items too long to show with them: by name, and where they are."""
    if not names:
        return []
    where = f": run-repl expand {ref} shows them whole in rest" if ref else ""
    return [styled("dim", f"fields not shown here (too long): {', '.join(names)}{where}")]


def more_items_hint(ref: str | None, next_offset: int, total: int) -> Line:
    """`… 434 more from item 67: run-repl expand REF --offset 66`: one number for people
    (items count from 1), the other for the command (offsets count from 0)."""
    rest = total - next_offset
    if ref is None:
        return styled(
            "dim", f"… {rest:,} more items were not stored: run the snippet again for them"
        )
    return styled(
        "dim",
        f"… {rest:,} more from item {next_offset + 1:,}: run-repl expand {ref} --offset {next_offset}",
    )
