"""Themes as data: shipped and user theme files, bad files, NO_COLOR."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from rich.syntax import Syntax
from textual.app import App, ComposeResult
from textual.color import Color
from textual.filter import dim_color
from textual.geometry import Region
from textual.theme import BUILTIN_THEMES
from textual.widgets import TextArea
from tui_helpers import SIZE, jump, make_app, run_to_end, screen_text, set_source, settle

from run_repl.tui import themes as themes_module
from run_repl.tui.themes import (
    SYNTAX_KEYS,
    ThemeFile,
    contrast_ratio,
    load_themes,
    no_color_active,
    rich_syntax_theme,
    shipped_themes_dir,
    syntax_colors,
    syntax_variable_defaults,
    theme_for_no_color,
)

SHIPPED = {"run-repl-dark", "run-repl-light", "run-repl-midnight"}

GOOD_USER_THEME = """\
name = "my-forest"
dark = true
primary = "#4caf50"
secondary = "#2e7d32"
accent = "#ffb300"
warning = "#ffb300"
error = "#e53935"
success = "#66bb6a"
foreground = "#e8f5e9"
background = "#0d1a10"
surface = "#13241a"
panel = "#1b3324"

[syntax]
keyword = "#ce93d8"
string = "#a5d6a7"
number = "#ffcc80"
comment = "#90a4ae"
function = "#81d4fa"
type = "#fff59d"
variable = "#e8f5e9"
operator = "#80cbc4"
punctuation = "#b0bec5"
constant = "#ffab91"
property = "#f48fb1"
"""


def _luminance(hex_colour: str) -> float:
    colour = Color.parse(hex_colour)

    def channel(value: int) -> float:
        v = value / 255
        return v / 12.92 if v <= 0.03928 else ((v + 0.055) / 1.055) ** 2.4

    return 0.2126 * channel(colour.r) + 0.7152 * channel(colour.g) + 0.0722 * channel(colour.b)


def contrast(a: str, b: str) -> float:
    high, low = sorted((_luminance(a), _luminance(b)), reverse=True)
    return (high + 0.05) / (low + 0.05)


@pytest.fixture
def user_dir(tmp_path: Path) -> Path:
    directory = tmp_path / "themes"
    directory.mkdir()
    return directory


def test_shipped_themes_load_and_are_complete(user_dir: Path) -> None:
    loaded, problems = load_themes(user_dir)
    assert problems == []
    by_name = {t.name: t for t in loaded}
    assert SHIPPED <= set(by_name)
    assert (shipped_themes_dir() / "__init__.py").exists()
    for theme in loaded:
        assert theme.shipped and theme.source.parent == shipped_themes_dir()
        app_theme = theme.app_theme
        for key in SYNTAX_KEYS:
            assert app_theme.variables[f"syntax-{key}"].startswith("#")
        # The editor theme shares the app theme's name, so the editor can follow the app.
        assert theme.editor_theme.name == app_theme.name
        styles = theme.editor_theme.syntax_styles
        for name in (
            "keyword",
            "string",
            "number",
            "comment",
            "function.call",
            "method.call",
            "type.builtin",
            "variable.parameter",
            "property",
            "punctuation.bracket",
            "constant.builtin",
            "boolean",
            "json.label",
            "json.null",
            "escape",
        ):
            assert styles[name].color is not None, name
        assert styles["keyword"].color.name == app_theme.variables["syntax-keyword"]  # type: ignore[union-attr]
        assert theme.editor_theme.base_style is not None
        assert theme.editor_theme.selection_style is not None
        assert app_theme.dark == (_luminance(app_theme.background or "#000") < 0.2)


def test_light_theme_is_light_with_good_contrast(user_dir: Path) -> None:
    light = next(t for t in load_themes(user_dir)[0] if t.name == "run-repl-light").app_theme
    assert not light.dark
    assert _luminance(light.background or "") > _luminance(light.foreground or "")
    assert contrast(light.foreground or "", light.background or "") >= 4.5
    assert contrast(light.foreground or "", light.surface or "") >= 4.5


def test_every_shipped_syntax_colour_is_readable(user_dir: Path) -> None:
    for theme in load_themes(user_dir)[0]:
        surface = theme.app_theme.surface or ""
        for key in SYNTAX_KEYS:
            colour = theme.app_theme.variables[f"syntax-{key}"]
            assert contrast(colour, surface) >= 4.5, (theme.name, key, colour)


def test_user_theme_is_added_from_the_config_dir() -> None:
    # conftest points RUN_REPL_CONFIG_DIR at a fresh temp dir: the default user dir is there.
    directory = themes_module.user_themes_dir()
    directory.mkdir(parents=True)
    (directory / "forest.toml").write_text(GOOD_USER_THEME, encoding="utf-8")
    loaded, problems = load_themes()
    assert problems == []
    forest = next(t for t in loaded if t.name == "my-forest")
    assert not forest.shipped and forest.source == directory / "forest.toml"
    assert forest.app_theme.primary == "#4caf50"
    assert forest.app_theme.variables["syntax-keyword"] == "#ce93d8"
    assert SHIPPED <= {t.name for t in loaded}


def test_user_theme_with_a_shipped_name_replaces_it(user_dir: Path) -> None:
    (user_dir / "mine.toml").write_text(
        GOOD_USER_THEME.replace('"my-forest"', '"run-repl-dark"'), encoding="utf-8"
    )
    loaded, problems = load_themes(user_dir)
    assert problems == []
    dark = [t for t in loaded if t.name == "run-repl-dark"]
    assert len(dark) == 1 and not dark[0].shipped
    assert dark[0].app_theme.primary == "#4caf50"


@pytest.mark.parametrize(
    ("file_text", "field"),
    [
        ('name = "broken"\ndark = true\nprimary = "#123456\n', "TOML syntax error"),
        (GOOD_USER_THEME.replace('comment = "#90a4ae"\n', ""), "syntax.comment"),
        (GOOD_USER_THEME.replace('"#ffb300"\nwarning', '"#ffb30"\nwarning'), "accent"),
        (GOOD_USER_THEME.replace('surface = "#13241a"', 'surface = "green"'), "surface"),
        (GOOD_USER_THEME + "extra = 1\n", "extra"),
    ],
    ids=["toml-syntax", "missing-colour", "bad-hex", "named-colour", "unknown-field"],
)
def test_a_bad_theme_file_is_reported_once_and_skipped(
    user_dir: Path, file_text: str, field: str
) -> None:
    (user_dir / "aaa-good.toml").write_text(GOOD_USER_THEME, encoding="utf-8")
    bad = user_dir / "broken.toml"
    bad.write_text(file_text, encoding="utf-8")
    loaded, problems = load_themes(user_dir)
    assert len(problems) == 1
    assert str(bad) in problems[0] and field in problems[0] and "skipped" in problems[0]
    names = {t.name for t in loaded}
    assert SHIPPED | {"my-forest"} <= names
    assert all(t.source != bad for t in loaded)


def test_two_user_files_with_one_name_report_the_second(user_dir: Path) -> None:
    (user_dir / "a.toml").write_text(GOOD_USER_THEME, encoding="utf-8")
    (user_dir / "b.toml").write_text(GOOD_USER_THEME, encoding="utf-8")
    loaded, problems = load_themes(user_dir)
    assert len(problems) == 1 and "b.toml" in problems[0] and "already used" in problems[0]
    assert [t.source.name for t in loaded if t.name == "my-forest"] == ["a.toml"]


def test_missing_user_dir_is_fine(tmp_path: Path) -> None:
    loaded, problems = load_themes(tmp_path / "nope")
    assert problems == [] and SHIPPED <= {t.name for t in loaded}


def test_short_hex_is_normalised() -> None:
    data = ThemeFile.model_validate(
        {
            **{
                k: "#abc"
                for k in (
                    "primary",
                    "secondary",
                    "accent",
                    "warning",
                    "error",
                    "success",
                    "foreground",
                    "background",
                    "surface",
                    "panel",
                )
            },
            "name": "short",
            "dark": True,
            "syntax": {k: "#FFF" for k in SYNTAX_KEYS},
        }
    )
    assert data.primary == "#aabbcc" and data.syntax.keyword == "#ffffff"


def test_no_color(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("NO_COLOR", raising=False)
    assert not no_color_active()
    monkeypatch.setenv("NO_COLOR", "")
    assert not no_color_active()  # no-color.org: only a non-empty value counts
    monkeypatch.setenv("NO_COLOR", "1")
    assert no_color_active()
    assert theme_for_no_color() == "ansi-dark"
    assert theme_for_no_color(dark=False) == "ansi-light"
    assert theme_for_no_color() in BUILTIN_THEMES
    assert BUILTIN_THEMES[theme_for_no_color()].ansi


def test_syntax_colours_for_themes_without_syntax_variables() -> None:
    assert syntax_colors(BUILTIN_THEMES["textual-light"]) == {
        k.removeprefix("syntax-"): v for k, v in syntax_variable_defaults(dark=False).items()
    }
    ansi = syntax_colors(BUILTIN_THEMES["ansi-dark"])
    assert ansi["keyword"] == "ansi_magenta"
    # Both render with Rich without complaint.
    for name in ("ansi-dark", "textual-dark"):
        theme = rich_syntax_theme(BUILTIN_THEMES[name])
        Syntax("const a = 1", "typescript", theme=theme)


class _ThemedApp(App[None]):
    CSS = "TextArea { color: $syntax-keyword; }"  # the syntax variables reach CSS

    def compose(self) -> ComposeResult:
        yield TextArea("const x = 1;", id="editor")

    def get_theme_variable_defaults(self) -> dict[str, str]:
        return syntax_variable_defaults()


async def test_themes_work_in_a_textual_app(user_dir: Path) -> None:
    loaded, _ = load_themes(user_dir)
    app = _ThemedApp()
    async with app.run_test() as pilot:
        editor = app.query_one(TextArea)
        for theme in loaded:
            app.register_theme(theme.app_theme)
            editor.register_theme(theme.editor_theme)
        for theme in loaded:
            app.theme = theme.name
            editor.theme = theme.name
            await pilot.pause()
            assert (
                app.theme_variables["syntax-keyword"] == theme.app_theme.variables["syntax-keyword"]
            )
        app.theme = theme_for_no_color()  # a theme without syntax variables still parses
        await pilot.pause()
        assert app.theme_variables["syntax-keyword"] == syntax_variable_defaults()["syntax-keyword"]


def test_shipped_dir_falls_back_to_the_repository(monkeypatch: pytest.MonkeyPatch) -> None:
    def missing(_name: str) -> None:
        raise ModuleNotFoundError("run_repl.themes")

    monkeypatch.setattr(themes_module.importlib.resources, "files", missing)
    assert shipped_themes_dir() == Path(themes_module.__file__).resolve().parents[2] / "themes"
    assert (shipped_themes_dir() / "run-repl-dark.toml").exists()


# ---------------------------------------------------------------- contrast on the screen
MIN_CONTRAST = 4.5  # WCAG AA for body text: every letter and digit the IDE draws


def low_contrast(app: App[Any], where: str, region: Region | None = None) -> list[str]:
    """Every piece of text on the screen (or in `region`) whose colour reads under
    MIN_CONTRAST on its background, with Textual's own dimming applied."""
    found = []
    for y, strip in enumerate(app.screen._compositor.render_strips()):
        if region is not None:
            if not region.y <= y < region.bottom:
                continue
            strip = strip.crop(region.x, region.right)
        for segment in strip:
            style = segment.style
            if style is None or not any(ch.isalnum() for ch in segment.text):
                continue
            fg, bg = style.color, style.bgcolor
            if fg is None or bg is None:
                continue
            if style.dim:
                fg = dim_color(bg, fg)
            ratio = contrast_ratio(Color.from_rich_color(fg), Color.from_rich_color(bg))
            if ratio < MIN_CONTRAST:
                found.append(
                    f"{where} row {y}: {segment.text.strip()!r} at {ratio:.2f}:1"
                    f" ({Color.from_rich_color(fg).hex} on {Color.from_rich_color(bg).hex})"
                )
    return found


@pytest.mark.slow
@pytest.mark.parametrize("theme", sorted(SHIPPED))
async def test_every_text_on_screen_reads_in_every_shipped_theme(
    data_dir: Path, theme: str, no_arm_delay: None
) -> None:
    """Idle, an approval waiting, the calls, the inbox, a table, JSON lines, an error: each
    text at 4.5:1 or better (the light theme's "No value yet" once was 1.06:1)."""
    app = make_app(data_dir)
    found: list[str] = []
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        app.theme = theme
        await pilot.pause()
        found += low_contrast(app, "idle")
        assert "No value yet" in screen_text(app)
        await set_source(
            pilot, "const d = await documents.listDrafts(); return documents.publish(d[0].id)"
        )
        await run_to_end(pilot)
        found += low_contrast(app, "approval")
        await jump(pilot, "c")
        found += low_contrast(app, "calls")
        await pilot.press("f6")
        await settle(pilot)
        found += low_contrast(app, "inbox", app.screen.query_one("#inbox-dialog").region)
        await pilot.press("escape")
        await set_source(pilot, "return Array.from({length: 3000}, (_, i) => ({i, name: 'n' + i}))")
        await run_to_end(pilot)
        await jump(pilot, "v")
        found += low_contrast(app, "table")
        await pilot.press("r")
        await pilot.pause()
        found += low_contrast(app, "lines")
        await set_source(pilot, "x.y")
        await run_to_end(pilot)
        found += low_contrast(app, "error")
    assert found == [], "\n".join(found)
