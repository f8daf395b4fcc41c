"""A call's arguments and result decoded from the wire and printed as JavaScript shows them."""

from __future__ import annotations

import datetime as dt
import math

import pytest

from run_repl.present.inspect import NotDecoded, decode_text, inspect_lines
from run_repl.present.styled import plain_lines
from run_repl.sandbox.values import UNDEFINED, JSBigInt, JSError, JSMap, JSRegExp
from run_repl.sandbox.wire.codec import encode


def shown(value: object) -> str:
    wire = encode(value)
    return plain_lines(inspect_lines(decode_text(wire[1:])))


def test_dates_and_the_other_tagged_values_read_as_javascript() -> None:
    when = dt.datetime(2025, 5, 5, 9, 0, tzinfo=dt.UTC)
    text = shown(
        [
            {"issued_at": when, "due": None, "gone": UNDEFINED},
            JSBigInt(2**70),
            math.nan,
            -0.0,
            JSRegExp("a+", "gi"),
            JSMap([("k", 1), (2, "two")]),
            {1, 2},
            b"\x00\x01",
            JSError("TypeError", "bad"),
        ]
    )
    assert text == "\n".join(
        [
            "[",
            "  {",
            '    "issued_at": Date 2025-05-05T09:00:00.000Z,',
            '    "due": null,',
            '    "gone": undefined',
            "  },",
            f"  {2**70}n,",
            "  NaN,",
            "  -0,",
            "  /a+/gi,",
            "  Map(2) {",
            '    "k" => 1,',
            '    2 => "two"',
            "  },",
            "  Set(2) [",
            "    1,",
            "    2",
            "  ],",
            "  Uint8Array(2) [0, 1],",
            "  TypeError: bad",
            "]",
        ]
    )
    assert '"\\u0000"' not in text


def test_shared_values_and_cycles() -> None:
    shared = {"a": 1}
    assert shown([shared, shared]).count('"a": 1') == 2
    loop: dict[str, object] = {"name": "x"}
    loop["self"] = loop
    assert '"self": [Circular]' in shown(loop)


def test_blank_runs_in_strings_are_marked_as_in_approvals() -> None:
    assert shown(["a" + " " * 12 + "b"]).splitlines()[1] == '  "a⟨12 spaces⟩b"'


def test_a_cut_text_is_not_decoded() -> None:
    with pytest.raises(NotDecoded):
        decode_text('[{"id": "inv_1", "amo')
