"""The lines of one page of a value, drawn with the Line API (as Textualize/toolong does):
only the visible lines are rendered, so a page of any size scrolls at once.
Also the JSON token colours the value panel's lines and tree share."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import ClassVar

from rich.cells import cell_len
from rich.segment import Segment
from rich.style import Style
from textual import events
from textual.cache import LRUCache
from textual.color import Color, ColorParseError
from textual.geometry import Size
from textual.message import Message
from textual.scroll_view import ScrollView
from textual.strip import Strip
from textual.widget import Widget

from ...guest_text import safe_text

MAX_LINE_CHARS = 2_000  # a longer line is cut on screen (copy and export keep it whole)

_TOKEN = re.compile(
    r'(?P<key>"(?:[^"\\]|\\.)*")(?=:)'
    r'|(?P<string>"(?:[^"\\]|\\.)*")'
    r"|(?P<number>-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?)"
    r"|(?P<literal>true|false|null)"
    r"|(?P<punct>[{}\[\],:])"
)
PALETTE = ("key", "string", "number", "literal", "punct")
# The app theme's syntax colours (`$syntax-*` variables), when it has them, so
# values and the editor look alike; otherwise the component classes' colours.
_SYNTAX = {
    "key": "property",
    "string": "string",
    "number": "number",
    "literal": "constant",
    "punct": "punctuation",
}


def foreground(widget: Widget, component: str) -> Style:
    """A component class's colour and attributes, without its background (the line's
    background is the cursor's or the panel's). Resolved against the widget's own
    background: a partial style would read `$text-muted` ("auto 60%") against none,
    which is white, and invisible on a light theme."""
    full = widget.get_component_rich_style(component)
    return Style(color=full.color, bold=full.bold, italic=full.italic)


def token_styles(widget: Widget) -> dict[str, Style]:
    """The colour of each kind of JSON token, from the widget's component classes and the theme."""
    variables = widget.app.get_css_variables()
    styles: dict[str, Style] = {}
    for name in PALETTE:
        style = foreground(widget, f"value-view--{name}")
        colour = variables.get(f"syntax-{_SYNTAX[name]}")
        if colour:
            try:
                style += Style(color=Color.parse(colour).rich_color)
            except ColorParseError:
                pass  # a bad theme colour is the theme loader's to report
        styles[name] = style
    return styles


def cut(text: str, limit: int = MAX_LINE_CHARS) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _width(text: str) -> int:
    return min(len(text) if text.isascii() else cell_len(text), MAX_LINE_CHARS)


class ValueLines(ScrollView, can_focus=False):
    """The visible lines of one page, drawn with the Line API; item i is highlighted as the cursor."""

    COMPONENT_CLASSES: ClassVar[set[str]] = {
        "value-view--key",
        "value-view--string",
        "value-view--number",
        "value-view--literal",
        "value-view--punct",
        "value-view--gutter",
        "value-view--gutter-cursor",
        "value-view--cursor",
        "value-view--placeholder",
    }
    DEFAULT_CSS = """
    ValueLines {
        height: 1fr;
        background: $surface;
    }
    """

    @dataclass
    class ItemClicked(Message):
        index: int

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self._texts: list[str] = []
        self._owners: list[int] = []
        self._starts: list[int] = [0]
        self._cursor = -1
        self._first_number = 1
        self._gutter = 0
        self._plain = False
        self._placeholder = ""
        # Rendered lines of this page only (full width, cropped on the way out).
        self._strips: LRUCache[tuple[int, bool], tuple[Strip | None, Strip]] = LRUCache(2048)
        self._styles: dict[str, Style] | None = None

    def show_lines(
        self,
        texts: list[str],
        owners: list[int],
        starts: list[int],
        *,
        first_number: int | None,
        plain: bool,
        cursor: int,
        placeholder: str = "",
    ) -> None:
        """Show a page's lines; `first_number` numbers items in a gutter (None: no gutter)."""
        self._texts, self._owners, self._starts = texts, owners, starts
        self._plain = plain
        self._placeholder = placeholder
        self._cursor = cursor
        if first_number is None:
            self._gutter = 0
        else:
            self._first_number = first_number
            self._gutter = len(str(first_number + max(len(starts) - 2, 0))) + 1
        self._strips.clear()
        width = max((_width(t) for t in texts), default=len(placeholder))
        self.virtual_size = Size(self._gutter + width, max(len(texts), 1))
        self.scroll_to(0, 0, animate=False)
        self.refresh()

    @property
    def cursor(self) -> int:
        return self._cursor

    @property
    def item_count(self) -> int:
        return len(self._starts) - 1

    def set_cursor(self, index: int, *, top: bool = False) -> None:
        """Move the highlight to item `index` and scroll it into view."""
        old, self._cursor = self._cursor, index
        for item in {old, index}:
            if 0 <= item < self.item_count:
                start = self._starts[item]
                self.refresh_lines(start, self._starts[item + 1] - start)
        self.reveal(index, top=top)

    def reveal(self, index: int, *, top: bool = False) -> None:
        if not 0 <= index < self.item_count:
            return
        start, end = self._starts[index], self._starts[index + 1]
        height = max(self.scrollable_content_region.height, 1)
        y = round(self.scroll_y)
        if top or start < y:
            target = start
        elif end > y + height:
            target = min(start, end - height)
        else:
            return
        self.scroll_to(y=target, animate=False)

    def notify_style_update(self) -> None:
        # A new theme: colours come from the component classes, so redraw.
        super().notify_style_update()
        self._styles = None
        self._strips.clear()

    def _palette(self) -> dict[str, Style]:
        if self._styles is None:
            styles = token_styles(self)
            for name in ("gutter", "gutter-cursor", "placeholder"):
                styles[name] = foreground(self, f"value-view--{name}")
            styles["base"] = self.rich_style
            styles["cursor"] = self.get_component_rich_style("value-view--cursor")
            self._styles = styles
        return self._styles

    def _render_full(self, index: int, selected: bool) -> tuple[Strip | None, Strip]:
        key = (index, selected)
        cached = self._strips.get(key)
        if cached is not None:
            return cached
        styles = self._palette()
        base = styles["cursor"] if selected else styles["base"]
        text = safe_text(cut(self._texts[index]))
        segments: list[Segment] = []
        if self._plain:
            segments.append(Segment(text, base))
        else:
            position = 0
            for match in _TOKEN.finditer(text):
                if match.start() > position:
                    segments.append(Segment(text[position : match.start()], base))
                segments.append(Segment(match.group(), base + styles[match.lastgroup or "punct"]))
                position = match.end()
            if position < len(text):
                segments.append(Segment(text[position:], base))
        body = Strip(segments)
        gutter: Strip | None = None
        if self._gutter:
            owner = self._owners[index]
            first = self._starts[owner] == index
            number = str(self._first_number + owner) if first else ""
            style = base + styles["gutter-cursor" if selected else "gutter"]
            gutter = Strip([Segment(number.rjust(self._gutter - 1) + " ", style)], self._gutter)
        self._strips[key] = (gutter, body)
        return gutter, body

    def render_line(self, y: int) -> Strip:
        scroll_x, scroll_y = self.scroll_offset
        index = scroll_y + y
        width = self.scrollable_content_region.width
        styles = self._palette()
        if not self._texts:
            if index == 0 and self._placeholder:
                text = Segment(self._placeholder, styles["base"] + styles["placeholder"])
                return Strip([text]).crop_extend(0, width, styles["base"])
            return Strip.blank(width, styles["base"])
        if index >= len(self._texts):
            return Strip.blank(width, styles["base"])
        selected = self._owners[index] == self._cursor
        gutter, body = self._render_full(index, selected)
        pad = styles["cursor"] if selected else styles["base"]
        body = body.crop_extend(scroll_x, scroll_x + width - self._gutter, pad)
        return Strip.join([gutter, body]) if gutter is not None else body

    def on_click(self, event: events.Click) -> None:
        index = event.y + round(self.scroll_y)
        if 0 <= index < len(self._owners):
            self.post_message(self.ItemClicked(self._owners[index]))
