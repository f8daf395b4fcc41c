"""Durations, sizes, JSON, places in text, pydantic errors, exit codes, colour, files."""

from __future__ import annotations

import datetime as dt
import io
import os
from pathlib import Path

import pytest
from pydantic import BaseModel, ValidationError

from run_repl.present import (
    ExitCode,
    args_text,
    atomic_write_text,
    color_enabled,
    first_error,
    format_bytes,
    formats,
    json_text,
    line_column,
    plural,
)
from run_repl.present.exit_codes import exit_codes_help


@pytest.mark.parametrize(
    ("ms", "text"),
    [
        (0, "0.0 ms"),
        (12.34, "12.3 ms"),
        (999.94, "999.9 ms"),
        (1000, "1.00 s"),
        (1234.5, "1.23 s"),
        (125_000, "2 min 5 s"),
        (3 * 3600_000 + 60_000, "3 h 1 min"),
        (float("nan"), "? ms"),
    ],
)
def test_format_ms(ms: float, text: str) -> None:
    assert formats.format_ms(ms) == text


@pytest.mark.parametrize(
    ("size", "text"),
    [(0, "0 B"), (1023, "1023 B"), (1536, "1.5 KiB"), (64 << 20, "64.0 MiB"), (5 << 30, "5.0 GiB")],
)
def test_format_bytes(size: int, text: str) -> None:
    assert format_bytes(size) == text


def test_plural() -> None:
    assert plural(1, "call") == "1 call"
    assert plural(1204, "item") == "1,204 items"
    assert plural(2, "entry", "entries") == "2 entries"


def test_json_text_and_args_text_show_decoded_values_whole() -> None:
    when = dt.datetime(2025, 1, 2, 3, 4, 5, tzinfo=dt.UTC)
    assert (
        json_text({"at": when, "tags": ("a",)})
        == '{"at": "2025-01-02T03:04:05+00:00", "tags": ["a"]}'
    )
    long = "x" * 5000
    assert args_text(["savings", long, 1_000_000]) == f'("savings", "{long}", 1000000)'
    assert args_text([]) == "()"


def test_line_column_counts_from_one_in_characters() -> None:
    text = "ab\ncdé\nf"
    assert line_column(text, 0) == (1, 1)
    assert line_column(text, 4) == (2, 2)
    assert line_column(text, 7) == (3, 1)
    assert line_column(text, 100) == (3, 2)  # past the end: the end


def test_first_error_is_one_line() -> None:
    class Limits(BaseModel):
        timeout_ms: int
        memory: int

    with pytest.raises(ValidationError) as caught:
        Limits.model_validate({"timeout_ms": "x", "memory": "y"})
    assert first_error(caught.value) == (
        "timeout_ms: Input should be a valid integer, unable to parse string as an integer "
        "(and 1 more problem)"
    )
    assert first_error(caught.value, prefix="limits").startswith("limits.timeout_ms: ")


def test_exit_codes() -> None:
    assert ExitCode.from_status("ok") == 0
    assert ExitCode.from_status("error") == 1
    assert ExitCode.from_status("interrupted") == 3
    assert ExitCode.from_status("interrupted", approvals_saved=False) == ExitCode.NOT_SAVED == 4
    assert "NOT saved" in exit_codes_help() and "  2  bad usage" in exit_codes_help()


class _Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


@pytest.mark.parametrize(
    ("env", "tty", "expected"),
    [
        ({}, True, True),
        ({}, False, False),
        ({"NO_COLOR": "1"}, True, False),
        ({"NO_COLOR": ""}, True, True),  # set but empty does not count (no-color.org)
        ({"TERM": "dumb"}, True, False),
        ({"FORCE_COLOR": "1"}, False, True),
        ({"FORCE_COLOR": "1", "NO_COLOR": "1"}, True, False),
    ],
)
def test_color_enabled(env: dict[str, str], tty: bool, expected: bool) -> None:
    stream = _Tty() if tty else io.StringIO()
    assert color_enabled(stream, env) is expected


def test_atomic_write_replaces_whole_and_keeps_the_mode(tmp_path: Path) -> None:
    target = tmp_path / "config.toml"
    atomic_write_text(target, "a = 1\n", mode=0o600)
    assert target.read_text() == "a = 1\n" and (target.stat().st_mode & 0o777) == 0o600
    atomic_write_text(target, "a = 2\n")
    assert target.read_text() == "a = 2\n" and (target.stat().st_mode & 0o777) == 0o600
    assert os.listdir(tmp_path) == ["config.toml"]


def test_atomic_write_failure_leaves_the_old_file_and_no_temporary(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = tmp_path / "f.txt"
    target.write_text("old")

    def full_disk(fd: int) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "fsync", full_disk)
    with pytest.raises(OSError, match="No space"):
        atomic_write_text(target, "new")
    assert target.read_text() == "old" and os.listdir(tmp_path) == ["f.txt"]
