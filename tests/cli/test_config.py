"""The settings file: read once and validated, updated without losing a person's edits."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

from run_repl.config import ConfigWriteError, Settings, load_settings, save_setting
from run_repl.sandbox.limits import Limits

COMMENTED = """\
# my settings
host = 'myapp.host:HOSTS'   # the team's host

# limits below
[limits]
timeout_ms = 60000 # one minute

[keymap]
"app.run" = "ctrl+r"
"""


def test_saving_keeps_comments_order_and_quoting(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    path.write_text(COMMENTED)
    save_setting("theme", 'run-repl\n"light"\t\\', path)
    text = path.read_text()
    assert text.startswith("# my settings\nhost = 'myapp.host:HOSTS'   # the team's host\n")
    assert "timeout_ms = 60000 # one minute" in text and "# limits below" in text
    data = tomllib.loads(text)
    assert data["theme"] == 'run-repl\n"light"\t\\' and data["host"] == "myapp.host:HOSTS"
    assert data["limits"] == {"timeout_ms": 60000}  # the new key did not land in a table
    save_setting("theme", "run-repl-dark", path)
    assert tomllib.loads(path.read_text())["theme"] == "run-repl-dark"
    assert path.read_text().count("theme =") == 1


def test_saving_into_a_file_of_tables_only_and_into_no_file(tmp_path: Path) -> None:
    tables = tmp_path / "a" / "config.toml"
    tables.parent.mkdir()
    tables.write_text('[keymap]\n"app.run" = "ctrl+r"\n')
    save_setting("theme", "x", tables)
    assert tomllib.loads(tables.read_text()) == {"theme": "x", "keymap": {"app.run": "ctrl+r"}}
    fresh = tmp_path / "b" / "config.toml"
    save_setting("theme", "y", fresh)
    assert tomllib.loads(fresh.read_text()) == {"theme": "y"}


def test_a_broken_file_is_not_overwritten(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    path.write_text("theme = [broken\n# keep me\n")
    with pytest.raises(ConfigWriteError, match="not valid TOML"):
        save_setting("theme", "x", path)
    assert path.read_text() == "theme = [broken\n# keep me\n"


def test_settings_are_one_validated_object(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("RUN_REPL_HOST", raising=False)
    monkeypatch.delenv("RUN_REPL_THEME", raising=False)
    path = tmp_path / "config.toml"
    path.write_text(COMMENTED)
    settings, problem = load_settings(path)
    assert problem is None
    assert isinstance(settings.limits, Limits) and settings.limits.timeout_ms == 60_000
    assert settings.keymap == {"app.run": "ctrl+r"} and settings.host == "myapp.host:HOSTS"
    merged = settings.limits_model(memory_bytes=32 << 20, timeout_ms=None)
    assert merged.timeout_ms == 60_000 and merged.memory_bytes == 32 << 20


@pytest.mark.parametrize(
    ("text", "where"),
    [
        (
            "[limits]\ntimeout_ms = 0\n",
            "limits.timeout_ms: Input should be greater than or equal to 1",
        ),
        ("[limits]\nno_such_limit = 1\n", "limits.no_such_limit: Extra inputs are not permitted"),
        ("colour = 'red'\n", "colour: Extra inputs are not permitted"),
        ("theme = [broken\n", "Invalid value"),
    ],
)
def test_a_bad_file_is_one_problem_and_the_defaults(tmp_path: Path, text: str, where: str) -> None:
    path = tmp_path / "config.toml"
    path.write_text(text)
    settings, problem = load_settings(path)
    assert settings == Settings()
    assert (
        problem is not None and where in problem and problem.endswith("using the default settings.")
    )
    assert "\n" not in problem


def test_environment_overrides(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RUN_REPL_HOST", "env.host:H")
    monkeypatch.setenv("RUN_REPL_THEME", "ansi-dark")
    path = tmp_path / "config.toml"
    path.write_text(COMMENTED)
    settings, _ = load_settings(path)
    assert settings.host == "env.host:H" and settings.theme == "ansi-dark"
