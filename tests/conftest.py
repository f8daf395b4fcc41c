from __future__ import annotations

import pytest


@pytest.fixture(autouse=True)
def _isolated_data_dir(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    # No test touches the user's real data or config directories.
    monkeypatch.setenv("RUN_REPL_DATA_DIR", str(tmp_path_factory.mktemp("data")))
    monkeypatch.setenv("RUN_REPL_CONFIG_DIR", str(tmp_path_factory.mktemp("config")))
