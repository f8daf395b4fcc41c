"""Themes as data: TOML files turned into a Textual theme and a matching editor theme.

A theme file (shipped ones live in `themes/`, user ones in `config_dir()/themes/`):

    name = "run-repl-dark"
    dark = true
    primary = "#61afef"      # and secondary, accent, warning, error, success,
    ...                      # foreground, background, surface, panel
    [syntax]
    keyword = "#c678dd"      # and string, number, comment, function, type, variable,
    ...                      # operator, punctuation, constant, property

Every colour is `#rrggbb` (or `#rgb`). The syntax colours ride along in the Textual
theme's `variables` as `syntax-keyword`, ... so CSS can use them, and they build
the `TextAreaTheme` (same name as the app theme) so the editor follows the app.
A bad file is reported once, by name and field, and skipped; the rest load.
"""

from __future__ import annotations

import importlib.resources
import os
import re
import tomllib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, ValidationError
from rich.style import Style
from rich.syntax import ANSISyntaxTheme, SyntaxTheme
from textual.color import Color, ColorParseError
from textual.theme import BUILTIN_THEMES, Theme
from textual.widgets.text_area import TextAreaTheme

from ..paths import config_dir
from ..sandbox.errors import RunReplError

__all__ = [
    "SYNTAX_KEYS",
    "LoadedTheme",
    "SyntaxColors",
    "ThemeFile",
    "contrast_ratio",
    "load_theme_file",
    "load_themes",
    "muted_colour",
    "no_color_active",
    "present_styles",
    "rich_colour",
    "rich_syntax_theme",
    "shipped_themes_dir",
    "syntax_colors",
    "syntax_variable_defaults",
    "text_on",
    "theme_for_no_color",
    "user_themes_dir",
]

_HEX = re.compile(r"^#(?:[0-9a-fA-F]{3}|[0-9a-fA-F]{6})$")


def _hex_colour(value: str) -> str:
    if not _HEX.match(value):
        raise ValueError(f"{value!r} is not a hex colour like #1a2b3c")
    if len(value) == 4:  # #abc -> #aabbcc, so every consumer sees one form
        value = "#" + "".join(c * 2 for c in value[1:])
    return value.lower()


HexColour = Annotated[str, AfterValidator(_hex_colour)]


class SyntaxColors(BaseModel):
    """The `[syntax]` table: one colour per kind of token."""

    model_config = ConfigDict(extra="forbid")

    keyword: HexColour
    string: HexColour
    number: HexColour
    comment: HexColour
    function: HexColour
    type: HexColour
    variable: HexColour
    operator: HexColour
    punctuation: HexColour
    constant: HexColour
    property: HexColour


SYNTAX_KEYS: tuple[str, ...] = tuple(SyntaxColors.model_fields)


class ThemeFile(BaseModel):
    """One theme file, validated. `to_app_theme` / `to_editor_theme` build the Textual side."""

    model_config = ConfigDict(extra="forbid")

    name: str = Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9_.-]*$", max_length=64)
    dark: bool
    primary: HexColour
    secondary: HexColour
    accent: HexColour
    warning: HexColour
    error: HexColour
    success: HexColour
    foreground: HexColour
    background: HexColour
    surface: HexColour
    panel: HexColour
    syntax: SyntaxColors

    def to_app_theme(self) -> Theme:
        variables = {f"syntax-{key}": value for key, value in self.syntax.model_dump().items()}
        # The cursor row of a table is the primary colour: its text black or white,
        # whichever reads on it (Textual's own pick can fall under 4.5:1).
        variables["block-cursor-foreground"] = text_on(self.primary)
        return Theme(
            name=self.name,
            primary=self.primary,
            secondary=self.secondary,
            accent=self.accent,
            warning=self.warning,
            error=self.error,
            success=self.success,
            foreground=self.foreground,
            background=self.background,
            surface=self.surface,
            panel=self.panel,
            dark=self.dark,
            variables=variables,
        )

    def to_editor_theme(self) -> TextAreaTheme:
        s = self.syntax
        # The editor sits on $surface, as Textual's own TextArea does.
        base = Color.parse(self.surface)
        fg = Color.parse(self.foreground)
        cursor_line = base.blend(fg, 0.04)  # a band you see, on which every colour still reads
        return TextAreaTheme(
            name=self.name,
            base_style=Style(color=self.foreground, bgcolor=self.surface),
            gutter_style=Style(color=base.blend(fg, 0.65).hex, bgcolor=self.surface),
            cursor_style=Style(color=self.surface, bgcolor=self.foreground),
            cursor_line_style=Style(bgcolor=cursor_line.hex),
            cursor_line_gutter_style=Style(color=self.foreground, bgcolor=cursor_line.hex),
            bracket_matching_style=Style(bgcolor=base.blend(fg, 0.22).hex, bold=True),
            selection_style=Style(bgcolor=base.blend(Color.parse(self.primary), 0.35).hex),
            syntax_styles=_tree_sitter_styles(s.model_dump(), error=self.error),
        )


def _tree_sitter_styles(c: Mapping[str, str], error: str) -> dict[str, Style]:
    """Tree-sitter highlight names (TypeScript, JSON, TOML, Markdown queries) to styles."""

    def st(key: str, **attrs: Any) -> Style:
        return Style(color=c[key], **attrs)

    keyword = st("keyword")
    string = st("string")
    number = st("number")
    function = st("function")
    type_ = st("type")
    variable = st("variable")
    constant = st("constant")
    prop = st("property")
    punct = st("punctuation")
    return {
        "keyword": keyword,
        "keyword.function": keyword,
        "keyword.return": keyword,
        "keyword.operator": keyword,
        "conditional": keyword,
        "repeat": keyword,
        "exception": keyword,
        "include": keyword,
        "storageclass": keyword,
        "type.qualifier": keyword,
        "variable.builtin": Style(color=c["keyword"], italic=True),  # this, super
        "string": string,
        "string.special": string,
        "string.documentation": string,
        "string.regex": string,
        "inline_code": string,
        "string.escape": constant,
        "escape": constant,
        "number": number,
        "float": number,
        "comment": st("comment", italic=True),
        "function": function,
        "function.call": function,
        "function.method": function,
        "function.builtin": function,
        "method": function,
        "method.call": function,
        "type": type_,
        "type.builtin": type_,
        "type.class": type_,
        "class": type_,
        "constructor": type_,
        "variable": variable,
        "variable.parameter": variable,
        "embedded": variable,
        "property": prop,
        "css.property": prop,
        "yaml.field": prop,
        "json.label": Style(color=c["property"], bold=True),
        "toml.type": prop,
        "label": prop,
        "operator": st("operator"),
        "regex.operator": st("operator"),
        "punctuation.bracket": punct,
        "punctuation.delimiter": punct,
        "punctuation.special": st("operator"),
        "regex.punctuation.bracket": punct,
        "constant": constant,
        "constant.builtin": Style(color=c["constant"], italic=True),
        "boolean": Style(color=c["constant"], italic=True),
        "json.null": Style(color=c["constant"], italic=True),
        "toml.datetime": number,
        "json.error": Style(color=error, underline=True),
        "html.end_tag_error": Style(color=error, underline=True),
        "tag": keyword,
        "heading": Style(color=c["keyword"], bold=True),
        "heading.marker": st("comment"),
        "bold": Style(bold=True),
        "italic": Style(italic=True),
        "strikethrough": Style(strike=True),
        "link.label": prop,
        "link.uri": Style(color=c["string"], underline=True),
        "list.marker": st("comment"),
    }


@dataclass
class LoadedTheme:
    """A theme ready to register: `app.register_theme(app_theme)`, and
    `text_area.register_theme(editor_theme)` under the same name."""

    app_theme: Theme
    editor_theme: TextAreaTheme
    source: Path
    shipped: bool = True

    @property
    def name(self) -> str:
        return self.app_theme.name


class ThemeFileError(RunReplError, ValueError):
    """A theme file that cannot be used; the message names the file and the field."""

    code = "THEME_FILE_INVALID"


def load_theme_file(path: Path, text: str | None = None) -> ThemeFile:
    """Read and validate one theme file; raises ThemeFileError with a one-line reason."""
    try:
        data = tomllib.loads(text if text is not None else path.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as exc:
        raise ThemeFileError(f"Theme file {path}: TOML syntax error: {exc}; skipped.") from exc
    except (OSError, UnicodeDecodeError) as exc:
        raise ThemeFileError(f"Theme file {path}: cannot be read: {exc}; skipped.") from exc
    try:
        return ThemeFile.model_validate(data)
    except ValidationError as exc:
        # The first problem is enough to fix the file; more would flood the one report.
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "file"
        more = len(exc.errors()) - 1
        extra = f" (and {more} more problem{'s' if more > 1 else ''})" if more else ""
        raise ThemeFileError(
            f"Theme file {path}: {where}: {first['msg']}{extra}; skipped."
        ) from exc


def shipped_themes_dir() -> Path:
    """The directory of the themes that ship with run-repl."""
    try:
        return Path(str(importlib.resources.files("run_repl.themes")))
    except ModuleNotFoundError:
        # An editable checkout that has not been reinstalled: the repository's themes/.
        return Path(__file__).resolve().parents[2] / "themes"


def user_themes_dir() -> Path:
    return config_dir() / "themes"


def _theme_files(directory: Path) -> list[Path]:
    try:
        return sorted(p for p in directory.iterdir() if p.suffix == ".toml" and p.is_file())
    except (FileNotFoundError, NotADirectoryError):
        return []
    except OSError:
        return []


def load_themes(user_dir: Path | None = None) -> tuple[list[LoadedTheme], list[str]]:
    """The shipped themes, then the user's (`config_dir()/themes/*.toml` unless `user_dir`).

    Returns the themes and one message per bad file; bad files are skipped. A user
    theme with a shipped theme's name replaces it (that is how one tweaks a theme).
    """
    themes: list[LoadedTheme] = []
    problems: list[str] = []
    by_name: dict[str, int] = {}
    user_dir = user_dir if user_dir is not None else user_themes_dir()
    sources: Iterable[tuple[Path, bool]] = [
        *((p, True) for p in _theme_files(shipped_themes_dir())),
        *((p, False) for p in _theme_files(user_dir)),
    ]
    for path, shipped in sources:
        try:
            spec = load_theme_file(path)
        except ThemeFileError as exc:
            problems.append(str(exc))
            continue
        loaded = LoadedTheme(spec.to_app_theme(), spec.to_editor_theme(), path, shipped)
        at = by_name.get(spec.name)
        if at is None:
            by_name[spec.name] = len(themes)
            themes.append(loaded)
        elif themes[at].shipped and not shipped:
            themes[at] = loaded
        else:
            problems.append(
                f"Theme file {path}: name: {spec.name!r} is already used by "
                f"{themes[at].source}; skipped."
            )
    return themes, problems


# ------------------------------------------------------------------ NO_COLOR


def no_color_active() -> bool:
    """NO_COLOR is set to a non-empty value (https://no-color.org)."""
    return bool(os.environ.get("NO_COLOR"))


def theme_for_no_color(dark: bool = True) -> str:
    """The built-in Textual theme to use under NO_COLOR: the terminal's own ANSI colours.

    Textual 8 has no `textual-ansi`; its ANSI themes are `ansi-dark` and `ansi-light`.
    """
    name = "ansi-dark" if dark else "ansi-light"
    assert name in BUILTIN_THEMES
    return name


# ------------------------------------------------------------------ syntax colours anywhere

# For themes that carry no syntax variables (Textual's built-ins): the shipped
# dark and light palettes, and the terminal's palette for ANSI themes.
_FALLBACK_DARK = {
    "keyword": "#c678dd",
    "string": "#98c379",
    "number": "#d19a66",
    "comment": "#8a909c",
    "function": "#61afef",
    "type": "#e5c07b",
    "variable": "#dcdfe4",
    "operator": "#56b6c2",
    "punctuation": "#abb2bf",
    "constant": "#d19a66",
    "property": "#e06c75",
}
_FALLBACK_LIGHT = {
    "keyword": "#cf222e",
    "string": "#0a3069",
    "number": "#0550ae",
    "comment": "#57606a",
    "function": "#8250df",
    "type": "#953800",
    "variable": "#1f2328",
    "operator": "#0550ae",
    "punctuation": "#24292f",
    "constant": "#0550ae",
    "property": "#116329",
}
_FALLBACK_ANSI = {
    "keyword": "ansi_magenta",
    "string": "ansi_green",
    "number": "ansi_cyan",
    "comment": "ansi_bright_black",
    "function": "ansi_blue",
    "type": "ansi_yellow",
    "variable": "ansi_default",
    "operator": "ansi_default",
    "punctuation": "ansi_default",
    "constant": "ansi_cyan",
    "property": "ansi_blue",
}


def syntax_variable_defaults(dark: bool = True) -> dict[str, str]:
    """`syntax-*` CSS variables for `App.get_theme_variable_defaults`, so CSS that
    uses them still parses under a theme that does not define them."""
    palette = _FALLBACK_DARK if dark else _FALLBACK_LIGHT
    return {f"syntax-{key}": value for key, value in palette.items()}


def syntax_colors(theme: Theme) -> dict[str, str]:
    """The theme's syntax colours by key (`keyword`, ...), with fallbacks for any theme."""
    fallback = _FALLBACK_ANSI if theme.ansi else (_FALLBACK_DARK if theme.dark else _FALLBACK_LIGHT)
    return {key: theme.variables.get(f"syntax-{key}", fallback[key]) for key in SYNTAX_KEYS}


def rich_colour(value: str | None) -> str | None:
    """A Textual colour (hex, name, `ansi_red`) as a Rich colour, or None if it is none."""
    if not value:
        return None
    try:
        colour = Color.parse(value)
    except ColorParseError:
        return None
    if colour.ansi is not None:
        return "default" if colour.ansi == -1 else f"color({colour.ansi})"
    return colour.hex


def rich_syntax_theme(theme: Theme) -> SyntaxTheme:
    """A Rich `Syntax` theme (pygments tokens) from the app theme's syntax colours,
    for read-only views (history preview, JSON, tracebacks) that follow the app."""
    from pygments.token import (
        Comment,
        Error,
        Generic,
        Keyword,
        Name,
        Number,
        Operator,
        Punctuation,
        String,
        Token,
    )

    c = {key: rich_colour(value) for key, value in syntax_colors(theme).items()}

    def st(key: str, **attrs: Any) -> Style:
        return Style(color=c[key], **attrs)

    error = rich_colour(theme.error or "") or "red"
    styles: dict[Any, Style] = {
        Token: Style(),
        Keyword: st("keyword"),
        Keyword.Constant: st("constant", italic=True),  # true, false, null
        Keyword.Type: st("type"),
        Name: st("variable"),
        Name.Other: st("variable"),
        Name.Function: st("function"),
        Name.Class: st("type"),
        Name.Builtin: st("type"),
        Name.Builtin.Pseudo: st("keyword", italic=True),  # this, super
        Name.Exception: Style(color=error, bold=True),
        Name.Attribute: st("property"),
        Name.Property: st("property"),
        Name.Tag: Style(color=c["property"], bold=True),  # JSON keys
        Name.Label: st("property"),
        Name.Constant: st("constant"),
        String: st("string"),
        String.Escape: st("constant"),
        String.Regex: st("string"),
        Number: st("number"),
        Comment: st("comment", italic=True),
        Operator: st("operator"),
        Operator.Word: st("keyword"),
        Punctuation: st("punctuation"),
        Error: Style(color=error),
        Generic.Traceback: st("comment"),
        Generic.Error: Style(color=error),
        Generic.Emph: Style(italic=True),
        Generic.Strong: Style(bold=True),
    }
    return ANSISyntaxTheme(styles)


def contrast_ratio(a: Color, b: Color) -> float:
    """WCAG's contrast ratio of two colours (1 to 21; body text wants 4.5 or more)."""

    def luminance(c: Color) -> float:
        def channel(v: int) -> float:
            x = v / 255
            return x / 12.92 if x <= 0.03928 else ((x + 0.055) / 1.055) ** 2.4

        return 0.2126 * channel(c.r) + 0.7152 * channel(c.g) + 0.0722 * channel(c.b)

    la, lb = luminance(a), luminance(b)
    return (max(la, lb) + 0.05) / (min(la, lb) + 0.05)


MUTED = 0.72
"""How far secondary text goes from the background to the foreground: readable (4.5:1
on every shipped theme, checked by a test), yet plainly quieter."""


def muted_colour(theme: Theme) -> str | None:
    """Secondary text's colour for a theme with hex colours (None: leave it to `dim`)."""
    try:
        background = Color.parse(theme.background or "")
        fg = Color.parse(theme.foreground or "")
    except ColorParseError:
        return None
    if background.ansi is not None or fg.ansi is not None:
        return None
    return background.blend(fg, MUTED).hex


def text_on(background: str) -> str:
    """Black or white, whichever reads better on `background` (a pill of colour)."""
    try:
        colour = Color.parse(background)
    except ColorParseError:
        return "default"
    if colour.ansi is not None:
        return "default"
    black, white = Color(0, 0, 0), Color(255, 255, 255)
    return (
        "#000000" if contrast_ratio(colour, black) >= contrast_ratio(colour, white) else "#ffffff"
    )


def present_styles(theme: Theme) -> dict[str, str]:
    """present/'s style names (`ok`, `warn`, `path`, ...) as Rich styles in the app
    theme's colours, so its lines read alike in the IDE's panels and follow the theme."""
    fallback = {"success": "green", "error": "red", "warning": "yellow", "primary": "cyan"}

    def colour(name: str) -> str:
        return rich_colour(getattr(theme, name, None)) or fallback.get(name, "")

    accent = colour("primary")
    warning = colour("warning")
    return {
        "ok": colour("success"),
        "error": colour("error"),
        "warn": warning,
        "info": accent,
        "dim": muted_colour(theme) or "dim",
        "bold": "bold",
        "path": f"bold {accent}",
        "decision": rich_colour(theme.secondary) or "magenta",
        "caret": f"bold {colour('error')}",
        "hint": accent,
        "string": rich_colour(syntax_colors(theme)["string"]) or colour("success"),
        "mark": f"bold reverse {warning}",
        "log.debug": muted_colour(theme) or "dim",
        "log.log": "",
        "log.info": accent,
        "log.warn": warning,
        "log.error": f"bold {colour('error')}",
    }
