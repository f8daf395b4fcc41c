"""The palette's "Reset the demo data": asks first (buttons, Cancel focused), then resets."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

from tui_helpers import settle, until

from run_repl.host.demo import _seed_rows, open_demo_db
from run_repl.tui.app import RunReplApp
from run_repl.tui.commands import IdeCommands
from run_repl.tui.screens.confirm_reset import ConfirmReset


def publish_everything(data_dir: Path) -> None:
    db = sqlite3.connect(open_demo_db(data_dir))
    with db:
        db.execute("UPDATE drafts SET published = 1")
    db.close()


def unpublished(data_dir: Path) -> int:
    db = sqlite3.connect(data_dir / "demo.sqlite3")
    try:
        return db.execute("SELECT count(*) FROM drafts WHERE NOT published").fetchone()[0]
    finally:
        db.close()


def reset_command(app: RunReplApp) -> Any:
    commands = {c.title: c for c in IdeCommands(app.screen).commands()}
    return commands["Reset the demo data"]


async def test_reset_asks_first_and_typing_does_not_answer(
    app_and_pilot: tuple[RunReplApp, Any], data_dir: Path
) -> None:
    app, pilot = app_and_pilot
    publish_everything(data_dir)
    reset_command(app).callback()
    await until(pilot, lambda: isinstance(app.screen, ConfirmReset))
    await pilot.press("y", "r", "enter")  # Cancel is focused: typing lands on the safe answer
    await settle(pilot)
    assert not isinstance(app.screen, ConfirmReset)
    assert unpublished(data_dir) == 0


async def test_reset_when_confirmed_puts_the_drafts_back(
    app_and_pilot: tuple[RunReplApp, Any], data_dir: Path
) -> None:
    app, pilot = app_and_pilot
    publish_everything(data_dir)
    reset_command(app).callback()
    await until(pilot, lambda: isinstance(app.screen, ConfirmReset))
    await pilot.press("left", "enter")  # from Cancel to Reset
    await settle(pilot)
    assert unpublished(data_dir) == sum(1 for row in _seed_rows()["drafts"] if not row[5]) > 0
    assert any("demo data" in n.message for n in app._notifications)


async def test_another_host_has_no_reset(tmp_path: Path, monkeypatch: Any) -> None:
    from run_repl.workspace import open_workspace

    monkeypatch.setenv("RUN_REPL_CONFIG_DIR", str(tmp_path / "config"))
    host = tmp_path / "myhost.py"
    host.write_text("def ping() -> str:\n    return 'pong'\n\nHOSTS = {'app': {'ping': ping}}\n")
    ws = open_workspace(f"{host}:HOSTS", data_dir_override=str(tmp_path / "data"))
    app = RunReplApp(ws)
    async with app.run_test(size=(160, 48)) as pilot:
        await pilot.pause()
        titles = {c.title for c in IdeCommands(app.screen).commands()}
        assert "Reset the demo data" not in titles
