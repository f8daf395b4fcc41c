"""The one sanitizer: what becomes a visible escape, and what stays."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from run_repl.present import safe, safe_json
from run_repl.present.sanitize import UNSAFE

BIDI = "\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"


@pytest.mark.parametrize(
    ("raw", "shown"),
    [
        ("a\x1b[31mb", "a\\u001b[31mb"),  # ESC (a CSI)
        ("\x1b]52;c;ZWNobw==\x07", "\\u001b]52;c;ZWNobw==\\u0007"),  # OSC 52: the clipboard
        ("x\x9b2Jy", "x\\u009b2Jy"),  # C1 CSI, one character
        ("del\x7f", "del\\u007f"),
        ("\x85\x9f\x80", "\\u0085\\u009f\\u0080"),
        ("cr\roverwrite", "cr\\u000doverwrite"),
        ("evil\u202etxt.exe", "evil\\u202etxt.exe"),
        ("lone \ud800 surrogate", "lone \\ud800 surrogate"),
        ("tab\tand\nnewline stay", "tab\tand\nnewline stay"),
        ("héllo → 世界 ✓", "héllo → 世界 ✓"),
    ],
)
def test_unsafe_characters_become_visible_escapes(raw: str, shown: str) -> None:
    assert safe(raw) == shown


def test_every_listed_control_is_caught() -> None:
    controls = [chr(c) for c in range(0x20) if chr(c) not in "\n\t"]
    controls += [chr(c) for c in range(0x7F, 0xA0)] + list(BIDI)
    for ch in controls:
        assert safe(ch) == f"\\u{ord(ch):04x}", repr(ch)


@given(st.text())
def test_safe_output_is_safe_and_idempotent(text: str) -> None:
    once = safe(text)
    assert UNSAFE.search(once) is None
    assert safe(once) == once
    once.encode("utf-8")  # never a lone surrogate left to crash a write


@pytest.mark.slow
@given(
    st.recursive(
        st.none() | st.booleans() | st.integers() | st.text(),
        lambda c: st.lists(c) | st.dictionaries(st.text(), c),
    )
)
def test_safe_json_is_the_same_data(value: object) -> None:
    text = safe_json(value)
    assert UNSAFE.search(text) is None
    assert json.loads(text) == value


def test_safe_json_escapes_c1_and_bidi_inside_strings() -> None:
    text = safe_json({"k\u202e": "a\x9bb\x1b"}, indent=None)
    assert text == '{"k\\u202e": "a\\u009bb\\u001b"}'
