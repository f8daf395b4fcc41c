"""The user's settings: one TOML file in the config directory, validated once.

    # ~/.config/run-repl/config.toml
    theme = "run-repl-dark"
    host = "myapp.agent_host:HOSTS"   # default for --host
    [limits]
    timeout_ms = 60000
    [keymap]
    run = "ctrl+r"                    # binding id = keys
    [store]
    max_bytes = 2147483648

Environment overrides: RUN_REPL_HOST, RUN_REPL_THEME. A bad file never stops
the program: it says what is wrong, once, and uses the defaults.
"""

from __future__ import annotations

import os
import tomllib
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from .paths import config_dir
from .sandbox.limits import Limits

CONFIG_FILE = "config.toml"


class StoreSettings(BaseModel):
    model_config = ConfigDict(extra="forbid")
    max_bytes: int = Field(1 << 30, ge=1 << 20)
    max_age_days: float = Field(30, gt=0)


class Settings(BaseModel):
    model_config = ConfigDict(extra="forbid")

    theme: str = "run-repl-dark"
    host: str | None = None
    limits: dict[str, int] = Field(default_factory=dict)
    keymap: dict[str, str] = Field(default_factory=dict)
    store: StoreSettings = Field(default_factory=StoreSettings)

    def limits_model(self, **overrides: int | None) -> Limits:
        values: dict[str, Any] = dict(self.limits)
        values.update({k: v for k, v in overrides.items() if v is not None})
        return Limits(**values)


def config_path(override: str | os.PathLike[str] | None = None) -> Path:
    return config_dir(override) / CONFIG_FILE


def load_settings(path: Path | None = None) -> tuple[Settings, str | None]:
    """The settings, and a one-line problem with the file if there was one."""
    path = path or config_path()
    problem: str | None = None
    data: dict[str, Any] = {}
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        pass
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        problem = f"{path}: {exc}; using the default settings."
    settings = Settings()
    if data:
        try:
            settings = Settings.model_validate(data)
            settings.limits_model()  # limit names and values are checked here too
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(p) for p in first["loc"]) or "file"
            problem = f"{path}: {where}: {first['msg']}; using the default settings."
            settings = Settings()
    if os.environ.get("RUN_REPL_HOST"):
        settings.host = os.environ["RUN_REPL_HOST"]
    if os.environ.get("RUN_REPL_THEME"):
        settings.theme = os.environ["RUN_REPL_THEME"]
    return settings, problem


def save_setting(key: str, value: str, path: Path | None = None) -> None:
    """Set one top-level string setting (the theme picked in the app), keeping the rest."""
    path = path or config_path()
    lines: list[str] = []
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except FileNotFoundError:
        pass
    entry = f"{key} = {_toml_string(value)}"
    for i, line in enumerate(lines):
        if line.split("=", 1)[0].strip() == key and not line.lstrip().startswith("["):
            lines[i] = entry
            break
        if line.lstrip().startswith("["):
            lines.insert(i, entry)
            break
    else:
        lines.append(entry)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text("\n".join(lines) + "\n", encoding="utf-8")
    tmp.replace(path)


def _toml_string(value: str) -> str:
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'
