"""One wording for every front end: the CLI, the line REPL and the IDE.

What a run did, said once: status lines, calls, errors with their place in
the snippet, approvals with every argument whole, history rows, value pages,
durations and JSON, exit codes, and the one sanitizer for guest-derived text.
Everything is plain text plus style names (`styled.Line`); renderers turn
lines into Rich text (`rich_render`, the CLI and the IDE) or prompt-toolkit
formatted text (`ptk_render`, the line REPL), sanitizing as they write.

This package imports neither Rich nor prompt-toolkit: import the renderer
you need from its module. Durations have one function, `formats.format_ms`;
call it through the module (as this package does) so one patch covers all.
"""

from __future__ import annotations

from . import formats
from .approvals import (
    SessionApprovals,
    approval_detail_lines,
    approval_list_lines,
    approval_message,
    approve_command,
    argument_lines,
    describe_state,
    left_pending_lines,
    not_saved_hint,
    saved_hint,
)
from .color import color_enabled
from .exit_codes import ExitCode
from .files import atomic_write_bytes, atomic_write_text
from .formats import (
    args_text,
    first_error,
    format_bytes,
    json_text,
    line_column,
    plural,
    pretty_json,
)
from .history import HistoryRow, format_when, history_lines
from .hosts import function_lines, function_meta
from .paging import (
    FIRST_PAGE_ONLY,
    GONE,
    PageRead,
    ValuePager,
    expand_lines,
    item_lines,
    items_header,
    value_document,
)
from .results import (
    CALLS_MADE_SHOWN,
    call_line,
    call_state,
    calls_lines,
    calls_made_lines,
    dropped_logs_lines,
    error_lines,
    interruption_lines,
    log_line,
    log_lines,
    log_rows,
    result_status_line,
    snippet_excerpt,
    status_line,
    value_lines,
    value_text,
    window_note,
)
from .sanitize import is_safe, safe, safe_json
from .styled import Fragment, Line, line, plain, plain_lines, styled

__all__ = [
    "CALLS_MADE_SHOWN",
    "FIRST_PAGE_ONLY",
    "GONE",
    "ExitCode",
    "Fragment",
    "HistoryRow",
    "Line",
    "PageRead",
    "SessionApprovals",
    "ValuePager",
    "approval_detail_lines",
    "approval_list_lines",
    "approval_message",
    "approve_command",
    "args_text",
    "argument_lines",
    "atomic_write_bytes",
    "atomic_write_text",
    "call_line",
    "call_state",
    "calls_lines",
    "calls_made_lines",
    "color_enabled",
    "describe_state",
    "dropped_logs_lines",
    "error_lines",
    "expand_lines",
    "first_error",
    "format_bytes",
    "format_when",
    "formats",
    "function_lines",
    "function_meta",
    "history_lines",
    "interruption_lines",
    "is_safe",
    "item_lines",
    "items_header",
    "json_text",
    "left_pending_lines",
    "line",
    "line_column",
    "log_line",
    "log_lines",
    "log_rows",
    "not_saved_hint",
    "plain",
    "plain_lines",
    "plural",
    "pretty_json",
    "result_status_line",
    "safe",
    "safe_json",
    "saved_hint",
    "snippet_excerpt",
    "status_line",
    "styled",
    "value_document",
    "value_lines",
    "value_text",
    "window_note",
]
