"""Rendering lines: Rich for the CLI and the IDE, prompt-toolkit fragments for the REPL.
Both sanitize every fragment as they write it, whatever produced it."""

from __future__ import annotations

import io

from prompt_toolkit.formatted_text import FormattedText

from run_repl.present import line, styled
from run_repl.present.ptk_render import to_formatted_text
from run_repl.present.rich_render import TerminalWriter, lines_to_text, rich_style, to_text

EVIL = "a\x1b]0;title\x07b\u202ec\ud800"
SHOWN = "a\\u001b]0;title\\u0007b\\u202ec\\ud800"


def test_rich_text_is_sanitized_and_styled() -> None:
    text = to_text(line(("error bold", "X"), EVIL))
    assert text.plain == "X" + SHOWN
    assert str(text.spans[0].style) == "red bold"
    assert lines_to_text([styled("ok", "a"), styled("", "b")]).plain == "a\nb"
    assert rich_style("path unknown dim") == "bold dim"


def test_writer_without_colour_writes_plain_whole_lines() -> None:
    out = io.StringIO()
    writer = TerminalWriter(out, color=False)
    long = "x" * 500
    writer.lines([line(("ok", "ok"), " ", EVIL), styled("dim", long)])
    writer.text('{"a": "\x9b"}')
    assert out.getvalue() == f"ok {SHOWN}\n{long}\n" + '{"a": "\\u009b"}\n'


def test_writer_with_colour_writes_sgr_but_no_guest_escape() -> None:
    out = io.StringIO()
    TerminalWriter(out, color=True).line(line(("error", "bad"), EVIL))
    raw = out.getvalue()
    assert "\x1b[31mbad" in raw and "\x1b]" not in raw and "\u202e" not in raw
    assert SHOWN in raw


def test_formatted_text_fragments() -> None:
    ft = to_formatted_text([line(("warn bold", "w"), EVIL), []])
    assert isinstance(ft, FormattedText)
    assert list(ft) == [("class:warn class:bold", "w"), ("", SHOWN), ("", "\n"), ("", "\n")]
    assert list(to_formatted_text([styled("ok", "x")], color=False)) == [("", "x"), ("", "\n")]
