"""`[keymap]`: an id that names no binding is reported with the closest real ones, and
every hint names the keys the person has, not the defaults."""

from __future__ import annotations

from pathlib import Path

from tui_helpers import SIZE, make_app, run_to_end, screen_text, settle

from run_repl.tui.components.editor.editor import EditorTabs
from run_repl.tui.keymap import KeyHints, default_keys, key_text


def write_config(data_dir: Path, keymap: dict[str, str]) -> None:
    config = data_dir.parent / "config"
    config.mkdir(parents=True, exist_ok=True)
    rows = "".join(f'"{k}" = "{v}"\n' for k, v in keymap.items())
    (config / "config.toml").write_text(f"[keymap]\n{rows}", encoding="utf-8")


def test_key_text_names_the_keys_that_work_everywhere_first() -> None:
    assert key_text("ctrl+enter,ctrl+j,f5") == "F5 or ctrl+j"
    assert key_text("ctrl+g") == "ctrl+g"
    assert key_text("ctrl+enter") == "ctrl+enter"


def test_every_panel_and_screen_binding_id_is_known() -> None:
    known = default_keys()
    for binding_id in ("app.run", "app.help", "editor.close", "value.export", "history.open"):
        assert binding_id in known
    problems = KeyHints({"app.rnu": "f12", "nonsense.id": "f11"}, known).problems()
    assert len(problems) == 2
    assert '"app.rnu"' in problems[0] and "'app.run'" in problems[0]
    assert '"nonsense.id"' in problems[1] and "F1 lists every binding id" in problems[1]


async def test_an_unknown_id_is_reported_when_the_ide_starts(data_dir: Path) -> None:
    write_config(data_dir, {"app.rnu": "ctrl+g"})
    app = make_app(data_dir)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        warnings = [n.message for n in app._notifications if n.severity == "warning"]
        assert any('"app.rnu"' in w and "'app.run'" in w for w in warnings), warnings


async def test_hints_name_the_rebound_run_key(data_dir: Path) -> None:
    write_config(data_dir, {"app.run": "ctrl+g"})
    app = make_app(data_dir)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        editor = app.query_one(EditorTabs).active_editor
        assert editor is not None
        assert editor.text.startswith("// ctrl+g runs · F1 help\n")
        assert "No value yet: ctrl+g runs the snippet." in screen_text(app)
        assert "F5" not in screen_text(app).split("Value")[1]
        await run_to_end(pilot, "ctrl+g")
        await settle(pilot)
        assert app.main.runs.result is not None and app.main.runs.result.status == "ok"


async def test_default_hints_are_unchanged(data_dir: Path) -> None:
    app = make_app(data_dir)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        editor = app.query_one(EditorTabs).active_editor
        assert editor is not None and editor.text.startswith("// F5 or ctrl+j runs · F1 help\n")
        assert "No value yet: F5 runs the snippet." in screen_text(app)
