"""The value panel: a run's value, whole when it is small, else a page of items at a time.

A windowed value can hold a million items, so the panel never builds a widget
per item or per line: `ValueLines` draws only the visible lines with the Line
API (as Textualize/toolong does), and the panel keeps only the current page's
items. Paging asks the run's pager (`Runner.expand`) for the next slice by
offset; a tree view, copying and exporting work from the same page and pager.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from itertools import islice
from pathlib import Path
from typing import Any, ClassVar, TextIO

from rich.segment import Segment
from rich.style import Style
from rich.text import Text
from textual import events, on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.cache import LRUCache
from textual.color import Color, ColorParseError
from textual.containers import Horizontal
from textual.content import Content
from textual.geometry import Size
from textual.message import Message
from textual.scroll_view import ScrollView
from textual.strip import Strip
from textual.widget import Widget
from textual.widgets import Input, Label, Static, Tree
from textual.widgets.tree import TreeNode
from textual.worker import get_current_worker

from ...sandbox.result import RunResult
from ...sandbox.result_store import MAX_PAGE, Page, ResultRefNotFound
from ...sandbox.value_window import field_path, itemize
from ..guest_text import safe_text

PAGE_ITEMS = 100
TREE_BATCH = 200  # children added per expansion, so a huge node mounts no more at once
MAX_LINE_CHARS = 2_000  # a longer line is cut on screen (copy and export keep it whole)
GONE = "this result is no longer stored: run the snippet again"
FIRST_PAGE_ONLY = "only the stored first page is available: run the snippet again for more"

Pager = Callable[[str, int, int], Page]
"""`runner.expand(ref, offset, limit)`: items [offset, offset + limit) of a stored value."""

_TOKEN = re.compile(
    r'(?P<key>"(?:[^"\\]|\\.)*")(?=:)'
    r'|(?P<string>"(?:[^"\\]|\\.)*")'
    r"|(?P<number>-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?)"
    r"|(?P<literal>true|false|null)"
    r"|(?P<punct>[{}\[\],:])"
)
_PALETTE = ("key", "string", "number", "literal", "punct")
# The app theme's syntax colours (`$syntax-*` variables), when it has them, so
# values and the editor look alike; otherwise the component classes' colours.
_SYNTAX = {
    "key": "property",
    "string": "string",
    "number": "number",
    "literal": "constant",
    "punct": "punctuation",
}


def token_styles(widget: Widget) -> dict[str, Style]:
    """The colour of each kind of JSON token, from the widget's component classes and the theme."""
    variables = widget.app.get_css_variables()
    styles: dict[str, Style] = {}
    for name in _PALETTE:
        style = widget.get_component_rich_style(f"value-view--{name}", partial=True)
        colour = variables.get(f"syntax-{_SYNTAX[name]}")
        if colour:
            try:
                style += Style(color=Color.parse(colour).rich_color)
            except ColorParseError:
                pass  # a bad theme colour is the theme loader's to report
        styles[name] = style
    return styles


def _cut(text: str, limit: int = MAX_LINE_CHARS) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _width(text: str) -> int:
    from rich.cells import cell_len

    return min(len(text) if text.isascii() else cell_len(text), MAX_LINE_CHARS)


def pretty(value: Any) -> str:
    return json.dumps(value, indent=2, ensure_ascii=False)


def item_lines(item: Any, path: str) -> list[str]:
    """The lines an item shows as: pretty JSON, an entry as `"key": value`, a text line as is."""
    if path == "$lines":
        return [item if isinstance(item, str) else json.dumps(item, ensure_ascii=False)]
    if path == "$entries" and isinstance(item, dict) and "key" in item:
        lines = pretty(item.get("value")).split("\n")
        lines[0] = f"{json.dumps(item['key'], ensure_ascii=False)}: {lines[0]}"
        return lines
    return pretty(item).split("\n")


def page_lines(items: list[Any], path: str) -> tuple[list[str], list[int], list[int]]:
    """A page as lines: each line's text, the item it belongs to, and each item's first line.

    `starts` ends with one more entry (the line count), so item i spans
    lines starts[i] to starts[i + 1]."""
    texts: list[str] = []
    owners: list[int] = []
    starts: list[int] = []
    for index, item in enumerate(items):
        lines = item_lines(item, path)
        starts.append(len(texts))
        texts.extend(lines)
        owners.extend([index] * len(lines))
    starts.append(len(texts))
    return texts, owners, starts


def item_value(item: Any, path: str) -> Any:
    """What a person means by an item: an entry is the one-key object it came from."""
    if path == "$entries" and isinstance(item, dict) and "key" in item:
        return {item["key"]: item.get("value")}
    return item


def copy_text(items: list[Any], path: str, *, whole: bool = True) -> str:
    """Items as text to copy: text lines as they are, else pretty JSON.

    A page (`whole`) is an array, or for entries one object; a single item is itself."""
    if path == "$lines":
        return "\n".join(i if isinstance(i, str) else json.dumps(i) for i in items)
    if path == "$entries":
        merged: dict[str, Any] = {}
        for item in items:
            merged.update(item_value(item, path))
        return pretty(merged)
    return pretty(items if whole else items[0])


def array_field(path: str) -> str | None:
    """The field name of a `$.<field>` or `$["<field>"]` path, else None."""
    if path.startswith("$."):
        return path[2:]
    if path.startswith('$["') and path.endswith('"]'):
        return json.loads(path[2:-1])
    return None


def _dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


def _write_joined(out: TextIO, pieces: Iterator[str], sep: str) -> int:
    """Write pieces with `sep` between them; returns how many there were."""
    count = 0
    for piece in pieces:
        if count:
            out.write(sep)
        out.write(piece)
        count += 1
    return count


def write_value(
    out: TextIO,
    path: str,
    rest: dict[str, Any] | None,
    items: Iterator[Any],
    *,
    as_json: bool = True,
) -> int:
    """Write a value from its items, in the shape they were cut from; returns the item count.

    `$` is an array, `$.<field>` the object with its other fields and the array
    under that field, `$entries` an object, `$lines` the text (a JSON string
    when `as_json`). Items are written as they come, so any size streams."""
    if path == "$lines":
        if not as_json:
            return _write_joined(out, (str(line) for line in items), "\n")
        out.write('"')
        count = _write_joined(out, (_dumps(str(line))[1:-1] for line in items), "\\n")
        out.write('"\n')
        return count
    field = array_field(path)
    if field is not None:
        out.write("{\n  ")
        for key, value in (rest or {}).items():
            out.write(f"{_dumps(key)}: {_dumps(value)},\n  ")
        out.write(f"{_dumps(field)}: [\n    ")
        count = _write_joined(out, (_dumps(item) for item in items), ",\n    ")
        out.write("\n  ]\n}\n")
        return count
    if path == "$entries":
        out.write("{\n  ")
        entries = (f"{_dumps(item['key'])}: {_dumps(item.get('value'))}" for item in items)
        count = _write_joined(out, entries, ",\n  ")
        out.write("\n}\n")
        return count
    out.write("[\n  ")
    count = _write_joined(out, (_dumps(item) for item in items), ",\n  ")
    out.write("\n]\n")
    return count


def pages_of(pager: Pager, ref: str) -> Iterator[Any]:
    """Every item of a stored value, fetched MAX_PAGE at a time."""
    offset = 0
    while True:
        page = pager(ref, offset, MAX_PAGE)
        yield from page.items
        offset += len(page.items)
        if not page.has_more or not page.items:
            return


@dataclass
class _Shown:
    """What the panel shows, whatever it came from (a RunResult or a stored envelope)."""

    inline: bool
    value: Any
    kind: str | None
    ref: str | None
    path: str
    rest: dict[str, Any] | None
    first_items: list[Any]
    total: int

    @classmethod
    def of(cls, data: dict[str, Any]) -> _Shown | None:
        if data.get("status") != "ok":
            return None
        window = data.get("value_window")
        if window:
            items = list(window.get("items") or [])
            return cls(
                inline=False,
                value=None,
                kind=data.get("value_kind"),
                ref=data.get("value_ref"),
                path=window.get("path") or "$",
                rest=window.get("rest"),
                first_items=items,
                total=int(data.get("total") or len(items)),
            )
        value = data.get("value")
        # The same path and count the engine pages an inline value by (`itemize`).
        itemized = itemize(value)
        total = len(itemized.items)
        return cls(
            True,
            value,
            data.get("value_kind"),
            data.get("value_ref"),
            itemized.path,
            None,
            [value],
            total,
        )


@dataclass
class _Export:
    """Everything an export needs, copied out of the panel so the worker never touches it."""

    path: Path
    shown: _Shown
    pager: Pager | None


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
                styles[name] = self.get_component_rich_style(f"value-view--{name}", partial=True)
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
        text = safe_text(_cut(self._texts[index]))
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


@dataclass
class _TreeItem:
    """A tree node's JSON value and how many of its children are in the tree so far."""

    key: str
    value: Any
    filled: int = 0


@dataclass
class _TreeMore:
    """The last child of a node whose other children are not added yet."""

    parent: TreeNode[Any]
    remaining: int


def _size(value: Any) -> int:
    return len(value) if isinstance(value, dict | list) else 0


class ValueTree(Tree[Any]):
    """One item as a tree: children are added when a node opens, TREE_BATCH at a time."""

    COMPONENT_CLASSES: ClassVar[set[str]] = Tree.COMPONENT_CLASSES | {
        f"value-view--{name}" for name in _PALETTE
    }

    _styles: dict[str, Style] | None = None

    def notify_style_update(self) -> None:
        self._styles = None
        super().notify_style_update()

    def show_value(self, label: str, value: Any) -> None:
        self.reset(Text(safe_text(label)), _TreeItem(label, value))
        root = self.root
        root.allow_expand = _size(value) > 0
        self._fill(root)
        root.expand()
        self.move_cursor(root)

    def _fill(self, node: TreeNode[Any]) -> None:
        data = node.data
        if not isinstance(data, _TreeItem):
            return
        value, start = data.value, data.filled
        pairs: Iterator[tuple[str, Any]]
        if isinstance(value, dict):
            pairs = islice(iter(value.items()), start, start + TREE_BATCH)
        elif isinstance(value, list):
            pairs = ((f"[{i}]", v) for i, v in enumerate(value[start : start + TREE_BATCH], start))
        else:
            return
        for key, child in pairs:
            label = Text(safe_text(_cut(str(key), 200)))
            if _size(child):
                node.add(label, _TreeItem(str(key), child))
            else:
                node.add_leaf(label, _TreeItem(str(key), child))
        data.filled = min(len(value), start + TREE_BATCH)
        if data.filled < len(value):
            node.add_leaf(Text("…"), _TreeMore(node, len(value) - data.filled))

    @on(Tree.NodeExpanded)
    def _expanded(self, event: Tree.NodeExpanded[Any]) -> None:
        event.stop()
        data = event.node.data
        if isinstance(data, _TreeItem) and data.filled == 0:
            self._fill(event.node)

    @on(Tree.NodeCollapsed)
    def _collapsed(self, event: Tree.NodeCollapsed[Any]) -> None:
        event.stop()

    @on(Tree.NodeHighlighted)
    def _highlighted(self, event: Tree.NodeHighlighted[Any]) -> None:
        event.stop()

    @on(Tree.NodeSelected)
    def _selected(self, event: Tree.NodeSelected[Any]) -> None:
        event.stop()
        more = event.node.data
        if isinstance(more, _TreeMore):
            event.node.remove()
            self._fill(more.parent)

    def render_label(self, node: TreeNode[Any], base_style: Style, style: Style) -> Text:
        # Colours are looked up at render time so the tree follows the theme.
        data = node.data
        if self._styles is None:
            self._styles = token_styles(self)
        color = self._styles.__getitem__

        label = Text()
        if isinstance(data, _TreeMore):
            label.append(
                f"… {data.remaining:,} more (enter: show {min(data.remaining, TREE_BATCH):,})",
                color("punct"),
            )
        elif isinstance(data, _TreeItem):
            value = data.value
            label.append(safe_text(_cut(data.key, 200)), color("key"))
            label.append(": ", color("punct"))
            if isinstance(value, dict):
                label.append(f"{{…}} {len(value):,} keys" if value else "{}", color("punct"))
            elif isinstance(value, list):
                label.append(f"[…] {len(value):,} items" if value else "[]", color("punct"))
            else:
                if isinstance(value, str):
                    name = "string"
                elif isinstance(value, bool) or value is None:
                    name = "literal"
                else:
                    name = "number"
                label.append(safe_text(_cut(_dumps(value), 200)), color(name))
        label.stylize(style)
        if node.allow_expand:
            prefix = (
                self.ICON_NODE_EXPANDED if node.is_expanded else self.ICON_NODE,
                base_style + Style(bold=True),
            )
            return Text.assemble(prefix, label)
        return label


class ValueView(Widget, can_focus=True):
    """A run's value: inline and whole, or a windowed value a page at a time."""

    HELP: ClassVar[str] = """\
## Value

A small value shows whole. A big one shows a page of items at a time,
fetched from the stored result; the header says which items you see.

| Key | Does |
|---|---|
| `n` / `pagedown` | next page |
| `p` / `pageup` | previous page |
| `down` `j` / `up` `k` | next / previous item (across pages) |
| `home` / `end` | first / last item of the page |
| `left` `h` / `right` `l` | scroll long lines sideways |
| `g` | go to item number (1-based) |
| `t` / `enter` | the selected item as a tree (`enter`/`space` fold; `t` or `escape` back) |
| `y` | copy the selected item (in the tree: the node) as JSON |
| `Y` | copy the page as JSON |
| `ctrl+e` | export the whole value to a file, page by page (asks before replacing one) |

A result kept in history may be gone from the store: then only its first
page is shown, and the header says so.
"""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("n,pagedown", "next_page", "Next page", id="value.next_page"),
        Binding("p,pageup", "previous_page", "Previous page", id="value.previous_page"),
        Binding("g", "jump", "Go to item", id="value.jump"),
        Binding("t,enter", "toggle_tree", "Tree", id="value.tree"),
        Binding("y", "copy_item", "Copy item", id="value.copy_item"),
        Binding("Y", "copy_page", "Copy page", id="value.copy_page"),
        # Not a letter: a word typed here by mistake must never write a file.
        Binding("ctrl+e", "export", "Export", id="value.export"),
        Binding("down,j", "next_item", "Next item", id="value.next_item", show=False),
        Binding("up,k", "previous_item", "Previous item", id="value.previous_item", show=False),
        Binding("home", "first_item", "First item", id="value.first_item", show=False),
        Binding("end", "last_item", "Last item", id="value.last_item", show=False),
        Binding("left,h", "scroll_left", "Scroll left", id="value.scroll_left", show=False),
        Binding("right,l", "scroll_right", "Scroll right", id="value.scroll_right", show=False),
        Binding("escape", "back", "Back", id="value.back", show=False),
    ]

    DEFAULT_CSS = """
    ValueView {
        height: 1fr;
        layout: vertical;
        #value-header {
            height: auto;
            max-height: 2;
            padding: 0 1;
            background: $panel;
            color: $text-muted;
            text-wrap: nowrap;
            text-overflow: ellipsis;
        }
        #value-tree {
            display: none;
            height: 1fr;
            background: $surface;
        }
        &.-tree #value-tree { display: block; }
        &.-tree ValueLines { display: none; }
        #value-prompt {
            display: none;
            height: 1;
            background: $panel;
        }
        &.-prompt #value-prompt { display: block; }
        #value-prompt Label { padding: 0 1; color: $text-accent; }
        #value-prompt Input { border: none; height: 1; padding: 0; width: 1fr; }
        .value-view--key { color: $text-primary; }
        .value-view--string { color: $text-success; }
        .value-view--number { color: $text-warning; }
        .value-view--literal { color: $text-secondary; text-style: italic; }
        .value-view--punct { color: $text-muted; }
        .value-view--gutter { color: $text-muted; }
        .value-view--gutter-cursor { color: $text-muted; text-style: bold; }
        .value-view--cursor { background: $foreground 7%; }
        &:focus .value-view--gutter-cursor { color: $text-accent; }
        .value-view--placeholder { color: $text-muted; text-style: italic; }
        &:focus .value-view--cursor { background: $accent 30%; }
    }
    """

    @dataclass
    class PageChanged(Message):
        """The visible page changed (count 0 and path "": nothing is shown)."""

        offset: int
        count: int
        total: int
        path: str

    @dataclass
    class ExportFinished(Message):
        """An export ended: `error` says why it failed, else `items` were written to `path`."""

        path: str
        items: int
        error: str | None = None

    def __init__(self, *, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(id=id, classes=classes)
        self._header = Static(id="value-header")
        self._lines = ValueLines(id="value-lines")
        self._tree = ValueTree("value", id="value-tree")
        self._prompt_label = Label(id="value-prompt-label")
        self._prompt_input = Input(id="value-prompt-input")
        self._prompt_kind: str | None = None
        self._replacing: Path | None = None
        self._shown: _Shown | None = None
        self._pager: Pager | None = None
        self._items: list[Any] = []
        self._offset = 0
        self._total = 0
        self._notice: str | None = None
        self._gone = False
        self._header_lines = 0
        self._bindings_state: tuple[object, ...] = ()

    def compose(self) -> ComposeResult:
        yield self._header
        yield self._lines
        yield self._tree
        with Horizontal(id="value-prompt"):
            yield self._prompt_label
            yield self._prompt_input

    def on_mount(self) -> None:
        # A value given before mount is drawn now.
        self._show_page(self._offset, self._items, cursor=0 if self._items else -1)

    # ------------------------------------------------------------------ public API
    def show_result(self, result: RunResult | None, pager: Pager | None) -> None:
        """Show a run's value (None, or a result that is not ok, clears the panel)."""
        if result is None or not result.ok:
            self._set(None, None)
            return
        window = result.value_window
        data: dict[str, Any] = {
            "status": result.status,
            "value": result.value,
            "value_kind": result.value_kind,
            "value_ref": result.value_ref,
            "total": result.total,
            "value_window": None
            if window is None
            else {"path": window.path, "items": window.items, "rest": window.rest},
        }
        self._set(_Shown.of(data), pager)

    def show_envelope(self, envelope: dict[str, Any], pager: Pager | None) -> None:
        """Show a stored `RunResult.model_dump(mode="json")`, whose ref may be gone by now."""
        shown = _Shown.of(envelope)
        notice = None
        if shown is not None and not shown.inline and shown.total > len(shown.first_items):
            if pager is None or shown.ref is None:
                notice = FIRST_PAGE_ONLY
            else:
                # One tiny read now, so the header says at once what paging can do.
                try:
                    pager(shown.ref, 0, 1)
                except ResultRefNotFound:
                    notice = GONE
                except Exception:
                    pass  # any other failure is reported by the page read that meets it
        self._set(shown, pager, notice)

    @property
    def page_offset(self) -> int:
        """The offset of the page on screen (0 for an inline value)."""
        return self._offset

    @property
    def page_items(self) -> tuple[Any, ...]:
        """The items of the page on screen (an inline value is one item: itself)."""
        return tuple(self._items)

    @property
    def selected_number(self) -> int | None:
        """The 1-based number of the selected item of a windowed value, else None."""
        index = self._lines.cursor
        if not self._windowed or not 0 <= index < len(self._items):
            return None
        return self._offset + index + 1

    @property
    def in_tree(self) -> bool:
        return self.has_class("-tree")

    @property
    def notice(self) -> str | None:
        """What the header says is missing (a gone ref, a first page only), if anything."""
        return self._notice

    # ------------------------------------------------------------------ state
    def _set(self, shown: _Shown | None, pager: Pager | None, notice: str | None = None) -> None:
        self._close_prompt()
        self._close_tree()
        self._shown, self._pager = shown, pager
        self._notice, self._gone = notice, notice == GONE
        self._total = 0 if shown is None else shown.total
        items = [] if shown is None else shown.first_items
        self._show_page(0, items, cursor=0 if items else -1)

    def _show_page(self, offset: int, items: list[Any], *, cursor: int, top: bool = False) -> None:
        """Make `items` (starting at item `offset`) the page on screen, and say so."""
        self._offset, self._items = offset, items
        if not self.is_mounted:
            return
        shown = self._shown
        if shown is None:
            self._lines.show_lines(
                [],
                [],
                [0],
                first_number=None,
                plain=True,
                cursor=-1,
                placeholder="No value to show.",
            )
        elif shown.inline:
            value = shown.value
            if shown.kind == "undefined":
                texts, plain = ["undefined"], True
            elif isinstance(value, str) and "\n" in value:
                texts, plain = value.split("\n"), True
            else:
                texts, plain = pretty(value).split("\n"), False
            self._lines.show_lines(
                texts, [0] * len(texts), [0, len(texts)], first_number=None, plain=plain, cursor=-1
            )
        else:
            texts, owners, starts = page_lines(items, shown.path)
            self._lines.show_lines(
                texts,
                owners,
                starts,
                first_number=offset + 1,
                plain=shown.path == "$lines",
                cursor=cursor,
            )
            if cursor >= 0:
                self._lines.reveal(cursor, top=top)
        self._update_header()
        self._refresh_bindings()
        if shown is None:
            self.post_message(self.PageChanged(0, 0, 0, ""))
        elif shown.inline:
            self.post_message(self.PageChanged(0, shown.total, shown.total, shown.path))
        else:
            self.post_message(self.PageChanged(offset, len(items), self._total, shown.path))

    def _update_header(self) -> None:
        shown = self._shown
        if shown is None:
            self._set_header(Content(""))
            return
        if self.has_class("-tree"):
            line = Content.assemble(
                (self._item_path(), "$text-accent"),
                " · tree · ",
                ("t", "bold"),
                " or ",
                ("escape", "bold"),
                " goes back",
            )
        elif shown.inline:
            value = shown.value
            kind = shown.kind or "value"
            size = ""
            if isinstance(value, list):
                size = f" · {len(value):,} items"
            elif isinstance(value, dict):
                size = f" · {len(value):,} keys"
            elif isinstance(value, str) and "\n" in value:
                size = f" · {value.count(chr(10)) + 1:,} lines"
            line = Content.assemble((kind, "$text-accent"), f"{size} · inline")
        else:
            first, last = self._offset + 1, self._offset + len(self._items)
            span = (
                f"items {first:,}–{last:,} of {self._total:,}"
                if self._items
                else f"no items (of {self._total:,})"
            )
            parts: list[str | tuple[str, str]] = [(shown.path, "$text-accent"), f" · {span}"]
            if shown.rest:
                rest = safe_text(_cut(json.dumps(shown.rest, ensure_ascii=False), 120))
                parts.append(f" · rest: {rest}")
            line = Content.assemble(*parts)
        if self._notice:
            style = "$text-error" if self._notice == GONE else "$text-warning"
            line = Content("\n").join([line, Content.assemble((self._notice, style))])
        self._set_header(line)

    def _set_header(self, line: Content) -> None:
        # A layout pass only when the header's height changes: paging stays a repaint.
        lines = line.plain.count("\n") + 1
        self._header.update(line, layout=lines != self._header_lines)
        self._header_lines = lines

    def _item_path(self) -> str:
        shown = self._shown
        index = self._lines.cursor
        if shown is None or shown.inline or not 0 <= index < len(self._items):
            return "$"
        number = self._offset + index
        if shown.path == "$lines":
            return f"line {number + 1:,}"
        if shown.path == "$entries":
            item = self._items[index]
            return (
                field_path(str(item.get("key")))
                if isinstance(item, dict)
                else f"entry {number + 1:,}"
            )
        return f"{shown.path}[{number}]"

    # ------------------------------------------------------------------ paging
    @property
    def _windowed(self) -> bool:
        return self._shown is not None and not self._shown.inline

    def _page_start(self, index: int) -> int:
        """The offset of the page holding item `index`.

        Pages are the window's first items, then PAGE_ITEMS at a time, so
        going forward, back or straight to an item always meets the same pages."""
        first = len(self._shown.first_items) if self._shown else 0
        if first and index < first:
            return 0
        return first + (index - first) // PAGE_ITEMS * PAGE_ITEMS

    def _fetch(self, start: int) -> list[Any] | None:
        """The items of the page at `start`, or None (and the reason on screen) when there are none."""
        shown = self._shown
        if shown is None:
            return None
        if start == 0 and shown.first_items:
            return shown.first_items
        if self._gone or self._pager is None or shown.ref is None:
            self._notice = GONE if self._gone else FIRST_PAGE_ONLY
            self._update_header()
            self.app.bell()
            return None
        # A page is at most PAGE_ITEMS items from memory or one store read:
        # reading it here is quicker than a thread hop and keeps paging in order.
        try:
            page = self._pager(shown.ref, start, PAGE_ITEMS)
        except ResultRefNotFound:
            self._gone = True
            self._notice = GONE
            self._update_header()
            self._refresh_bindings()
            return None
        except Exception as error:
            self.notify(
                f"Could not read items from {start + 1:,}: {error}", title="Value", severity="error"
            )
            return None
        self._total = page.total
        return page.items or None

    def _go(self, start: int, cursor: int, *, top: bool = False, last: bool = False) -> bool:
        items = self._fetch(start)
        if items is None:
            return False
        cursor = len(items) - 1 if last else max(0, min(cursor, len(items) - 1))
        self._show_page(start, items, cursor=cursor, top=top)
        return True

    def action_next_page(self) -> None:
        start = self._offset + len(self._items)
        if start >= self._total:
            self.app.bell()
            return
        self._go(start, 0)

    def action_previous_page(self) -> None:
        if self._offset == 0:
            self.app.bell()
            return
        self._go(self._page_start(self._offset - 1), 0)

    def action_next_item(self) -> None:
        if not self._windowed:
            self._lines.scroll_down(animate=False)
            return
        cursor = self._lines.cursor
        if cursor + 1 < len(self._items):
            self._select(cursor + 1)
        elif self._offset + len(self._items) < self._total:
            self._go(self._offset + len(self._items), 0)

    def action_previous_item(self) -> None:
        if not self._windowed:
            self._lines.scroll_up(animate=False)
            return
        cursor = self._lines.cursor
        if cursor > 0:
            self._select(cursor - 1)
        elif self._offset > 0:
            self._go(self._page_start(self._offset - 1), 0, last=True)

    def action_first_item(self) -> None:
        if self._windowed and self._items:
            self._select(0)
        else:
            self._lines.scroll_home(animate=False)

    def action_last_item(self) -> None:
        if self._windowed and self._items:
            self._select(len(self._items) - 1)
        else:
            self._lines.scroll_end(animate=False)

    def action_scroll_left(self) -> None:
        self._lines.scroll_left(animate=False)

    def action_scroll_right(self) -> None:
        self._lines.scroll_right(animate=False)

    def _select(self, index: int, *, top: bool = False) -> None:
        self._lines.set_cursor(index, top=top)

    def jump_to(self, number: int) -> bool:
        """Show the page holding item `number` (1-based) with that item selected."""
        index = number - 1
        if not self._windowed or not 0 <= index < self._total:
            self.notify(
                f"No item {number:,}: items are 1–{self._total:,}.",
                title="Value",
                severity="warning",
            )
            return False
        start = self._page_start(index)
        if start == self._offset and self._items:
            self._select(index - start, top=True)
            return True
        return self._go(start, index - start, top=True)

    @on(ValueLines.ItemClicked)
    def _clicked(self, event: ValueLines.ItemClicked) -> None:
        event.stop()
        if self._windowed:
            self._select(event.index)

    # ------------------------------------------------------------------ tree
    def _selected_value(self) -> Any:
        shown = self._shown
        if shown is None:
            return None
        if shown.inline:
            return shown.value
        index = self._lines.cursor
        if not 0 <= index < len(self._items):
            return None
        return item_value(self._items[index], shown.path)

    def action_toggle_tree(self) -> None:
        if self.has_class("-tree"):
            self._close_tree()
            self.focus()
            return
        if self._shown is None or (self._windowed and not self._items):
            return
        self.add_class("-tree")
        self._tree.show_value(self._item_path(), self._selected_value())
        self._tree.focus()
        self._update_header()
        self._refresh_bindings()

    def _close_tree(self) -> None:
        if self.has_class("-tree"):
            self.remove_class("-tree")
            self._tree.clear()
            self._update_header()
            self._refresh_bindings()

    def action_back(self) -> None:
        if self._prompt_kind is not None:
            self._close_prompt()
        elif self.has_class("-tree"):
            self._close_tree()
        self.focus()

    # ------------------------------------------------------------------ copy
    def action_copy_item(self) -> None:
        shown = self._shown
        if shown is None:
            return
        if self.has_class("-tree"):
            node = self._tree.cursor_node
            data = node.data if node is not None else None
            if not isinstance(data, _TreeItem):
                return
            text, what = pretty(data.value), data.key
        elif shown.inline:
            text, what = pretty(shown.value), "the value"
        else:
            index = self._lines.cursor
            if not 0 <= index < len(self._items):
                return
            text = copy_text([self._items[index]], shown.path, whole=False)
            what = f"item {self._offset + index + 1:,}"
        self.app.copy_to_clipboard(text)
        self.notify(f"Copied {what} ({text.count(chr(10)) + 1:,} lines).", title="Value")

    def action_copy_page(self) -> None:
        shown = self._shown
        if shown is None:
            return
        if shown.inline:
            text, what = pretty(shown.value), "the value"
        else:
            text = copy_text(self._items, shown.path)
            what = f"items {self._offset + 1:,}–{self._offset + len(self._items):,}"
        self.app.copy_to_clipboard(text)
        self.notify(f"Copied {what} ({text.count(chr(10)) + 1:,} lines).", title="Value")

    # ------------------------------------------------------------------ prompt
    def _open_prompt(self, kind: str, label: str, value: str) -> None:
        self._prompt_kind = kind
        self._prompt_label.update(label)
        self._prompt_input.value = value
        self._prompt_input.cursor_position = len(value)
        self.add_class("-prompt")
        self._prompt_input.focus()
        self._refresh_bindings()

    def _close_prompt(self) -> None:
        if self._prompt_kind is not None:
            self._prompt_kind = None
            self.remove_class("-prompt")
            self._refresh_bindings()

    def action_jump(self) -> None:
        if self._windowed:
            self._open_prompt("jump", f"Go to item (1–{self._total:,}):", "")

    @on(Input.Submitted, "#value-prompt-input")
    def _prompt_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        kind, text = self._prompt_kind, event.value.strip()
        self._close_prompt()
        (self._tree if self.has_class("-tree") else self).focus()
        if kind == "jump" and text:
            try:
                number = int(text.replace(",", "").replace("_", ""))
            except ValueError:
                self.notify(f"Not an item number: {text!r}.", title="Value", severity="warning")
                return
            self.jump_to(number)
        elif kind in ("export", "replace") and text:
            path = Path(text).expanduser()
            if path.exists() and not (kind == "replace" and path == self._replacing):
                # Replacing a file takes a second, deliberate enter on the same name.
                self._replacing = path
                self._open_prompt("replace", f"{path} exists: enter replaces it:", text)
                return
            self.export_to(path)

    # ------------------------------------------------------------------ export
    def _default_export_path(self) -> str:
        shown = self._shown
        name = (shown.ref if shown and shown.ref else "value").removeprefix("res_")
        text = shown is not None and (shown.path == "$lines" and not shown.inline)
        return f"./value-{name}.{'txt' if text else 'json'}"

    def action_export(self) -> None:
        if self._shown is not None:
            self._open_prompt("export", "Export the whole value to:", self._default_export_path())

    def export_to(self, path: Path) -> None:
        """Write the whole value to `path` in a thread, page by page; ExportFinished says how it went."""
        shown = self._shown
        if shown is None:
            return
        if not shown.inline and shown.total > len(shown.first_items):
            if self._gone or self._pager is None or shown.ref is None:
                reason = GONE if self._gone else FIRST_PAGE_ONLY
                self.notify(f"Cannot export: {reason}.", title="Export", severity="error")
                return
        self.notify(f"Exporting to {path} …", title="Export")
        self._export(_Export(path, shown, self._pager))

    @work(thread=True, group="value-export", exit_on_error=False)
    def _export(self, job: _Export) -> None:
        # Runs in a thread: reads pages and writes, touches no widget, reports by message.
        worker = get_current_worker()
        shown = job.shown
        partial = job.path.with_name(job.path.name + ".part")
        as_json = job.path.suffix.lower() == ".json"
        try:
            job.path.parent.mkdir(parents=True, exist_ok=True)
            with partial.open("w", encoding="utf-8") as out:
                if shown.inline:
                    value = shown.value
                    out.write(
                        value if isinstance(value, str) and not as_json else pretty(value) + "\n"
                    )
                    count = shown.total
                else:
                    if shown.total <= len(shown.first_items):
                        items: Iterator[Any] = iter(shown.first_items)
                    else:
                        assert job.pager is not None and shown.ref is not None
                        items = pages_of(job.pager, shown.ref)

                    def checked(source: Iterator[Any]) -> Iterator[Any]:
                        for n, item in enumerate(source):
                            if n % MAX_PAGE == 0 and worker.is_cancelled:
                                raise RuntimeError("export cancelled")
                            yield item

                    count = write_value(
                        out, shown.path, shown.rest, checked(items), as_json=as_json
                    )
            os.replace(partial, job.path)
        except ResultRefNotFound:
            partial.unlink(missing_ok=True)
            self.post_message(self.ExportFinished(str(job.path), 0, GONE))
        except Exception as error:
            partial.unlink(missing_ok=True)
            self.post_message(
                self.ExportFinished(str(job.path), 0, f"{type(error).__name__}: {error}")
            )
        else:
            self.post_message(self.ExportFinished(str(job.path.resolve()), count))

    @on(ExportFinished)
    def _export_finished(self, event: ExportFinished) -> None:
        if event.error:
            self.notify(
                f"Export to {event.path} failed: {event.error}", title="Export", severity="error"
            )
        else:
            self.notify(f"Exported {event.items:,} items to {event.path}", title="Export")

    # ------------------------------------------------------------------ bindings
    def _refresh_bindings(self) -> None:
        # Only when what is allowed changes: a footer rebuilds itself on every refresh.
        shown = self._shown
        state = (shown is None, shown is not None and shown.inline, self.in_tree, self._prompt_kind)
        if state != self._bindings_state:
            self._bindings_state = state
            self.refresh_bindings()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "back":
            return self._prompt_kind is not None or self.has_class("-tree")
        if self._prompt_kind is not None or self._shown is None:
            return False
        if self.has_class("-tree"):
            return action in {"toggle_tree", "copy_item", "copy_page", "export"}
        if action in {"next_page", "previous_page", "jump"}:
            return self._windowed
        return True
