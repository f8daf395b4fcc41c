"""Where run-repl keeps its files: the data and config directories.

Shared by the engine (its continuation secret) and the front ends (the store,
the config), so it sits above both and imports neither."""

from __future__ import annotations

import os
from pathlib import Path

import platformdirs

APP = "run-repl"


def data_dir(override: str | os.PathLike[str] | None = None) -> Path:
    """`--data-dir`, else RUN_REPL_DATA_DIR, else the platform's user data directory."""
    chosen = override or os.environ.get("RUN_REPL_DATA_DIR") or platformdirs.user_data_dir(APP)
    return Path(chosen).expanduser()


def config_dir(override: str | os.PathLike[str] | None = None) -> Path:
    """RUN_REPL_CONFIG_DIR, else the platform's user config directory."""
    chosen = override or os.environ.get("RUN_REPL_CONFIG_DIR") or platformdirs.user_config_dir(APP)
    return Path(chosen).expanduser()
