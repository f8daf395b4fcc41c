"""The editor: tabs of TypeScript buffers that persist across restarts.

Highlighting is tree-sitter-typescript (Textual's JavaScript query plus the
TypeScript one); a buffer past LARGE_BUFFER_LINES falls back to plain text so
typing stays instant.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import ClassVar

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.message import Message
from textual.widgets import TabbedContent, TabPane, TextArea

LARGE_BUFFER_LINES = 5000
LANGUAGE = "typescript"
DEFAULT_SOURCE = """// F5 or ctrl+j runs · F1 help
const [customer] = await crm.listAccounts()
return await store.listOrders(customer.id)
"""


@cache
def typescript_language() -> tuple[object, str] | None:
    """The tree-sitter language and highlight query, built once per process."""
    try:
        import textual
        import tree_sitter_typescript
        from tree_sitter import Language
    except ImportError:
        return None
    js_query = Path(textual.__file__).parent / "tree-sitter" / "highlights" / "javascript.scm"
    ts_query = Path(tree_sitter_typescript.__file__).parent / "queries" / "highlights.scm"
    try:
        query = js_query.read_text() + "\n" + ts_query.read_text()
    except OSError:
        return None
    return Language(tree_sitter_typescript.language_typescript()), query


class CodeEditor(TextArea):
    HELP: ClassVar[str] = """\
### Editor
TypeScript or JavaScript: the body of an async function. Top-level `await` works;
the last expression (or an explicit `return`) is the run's value.

- **F5**, **ctrl+j** or **ctrl+enter**: run the buffer (or the selection); ctrl+enter is
  plain enter in many terminals, so F5 and ctrl+j are the ones that always work
- **escape** / **ctrl+c** while running: cancel
- **ctrl+r**: run the last snippet again
- **ctrl+o**: jump: a letter on every panel (e editor, v value, l logs, c calls,
  a approval) and **o** to open a file; **F4** / **shift+F4**: next / previous panel
- **F3**: decide a pending approval (your keys never reach it otherwise)
- **ctrl+n** new buffer, **F8** open a file, **ctrl+s** save, **ctrl+w** close the buffer
"""

    def __init__(self, text: str = "", *, name: str | None = None, id: str | None = None) -> None:
        super().__init__(
            text,
            soft_wrap=False,
            tab_behavior="indent",
            show_line_numbers=True,
            name=name,
            id=id,
        )
        self.indent_width = 2
        lang = typescript_language()
        if lang is not None:
            self.register_language(LANGUAGE, lang[0], lang[1])  # type: ignore[arg-type]
        self._apply_language()

    def _apply_language(self) -> None:
        wanted = (
            LANGUAGE
            if typescript_language() and self.document.line_count <= LARGE_BUFFER_LINES
            else None
        )
        if self.language != wanted:
            self.language = wanted

    @on(TextArea.Changed)
    def _on_changed(self) -> None:
        self._apply_language()

    def run_text(self) -> str:
        """The selection if there is one, else the whole buffer."""
        return self.selected_text or self.text

    def jump_to(self, line: int, column: int | None) -> None:
        """Put the cursor at a 1-based line and column of the user's text."""
        row = max(0, min(line - 1, self.document.line_count - 1))
        col = max(0, (column or 1) - 1)
        self.move_cursor((row, min(col, len(self.document.get_line(row)))), center=True)
        self.focus()


@dataclass
class Buffer:
    title: str
    text: str
    path: str | None = None
    cursor: tuple[int, int] = (0, 0)
    key: str = field(default="")


class BufferStore:
    """Where the tabs live between sessions: one JSON file in the data directory."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def load(self) -> list[Buffer]:
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
            return [
                Buffer(b["title"], b["text"], b.get("path"), tuple(b.get("cursor", (0, 0))))  # type: ignore[arg-type]
                for b in data.get("buffers", [])
            ]
        except (OSError, ValueError, KeyError, TypeError):
            return []

    def save(self, buffers: list[Buffer], active: int) -> None:
        data = {
            "active": active,
            "buffers": [
                {"title": b.title, "text": b.text, "path": b.path, "cursor": list(b.cursor)}
                for b in buffers
            ],
        }
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            tmp = self.path.with_name(self.path.name + f".{os.getpid()}.tmp")
            tmp.write_text(json.dumps(data), encoding="utf-8")
            tmp.replace(self.path)
        except OSError:
            pass  # buffers are a convenience: never fail the app over them

    def active_index(self) -> int:
        try:
            return int(json.loads(self.path.read_text(encoding="utf-8")).get("active", 0))
        except (OSError, ValueError, TypeError, AttributeError):
            return 0


class EditorTabs(Vertical):
    """Tabs of buffers. The app asks it for the active editor and its text."""

    BINDINGS: ClassVar[list[Binding]] = [
        Binding("ctrl+n", "new_buffer", "New", id="editor.new", show=False),
        # Before the TextArea's own ctrl+w (delete word left; ctrl+backspace still does that).
        Binding("ctrl+w", "close_buffer", "Close", id="editor.close", priority=True, show=False),
        Binding("ctrl+pagedown", "next_tab", "Next tab", show=False, id="editor.next_tab"),
        Binding(
            "ctrl+pageup", "previous_tab", "Previous tab", show=False, id="editor.previous_tab"
        ),
    ]

    class BufferSaved(Message):
        def __init__(self, path: str) -> None:
            super().__init__()
            self.path = path

    def __init__(
        self, store: BufferStore, *, initial: list[Buffer] | None = None, id: str | None = None
    ) -> None:
        super().__init__(id=id)
        self.store = store
        self._initial = initial
        self._counter = 0
        self._buffers: dict[str, Buffer] = {}

    def compose(self) -> ComposeResult:
        yield TabbedContent(id="editor-tabs")

    async def on_mount(self) -> None:
        buffers = self._initial if self._initial is not None else self.store.load()
        if not buffers:
            buffers = [Buffer("untitled", DEFAULT_SOURCE)]
        for buffer in buffers:
            await self.add_buffer(buffer, activate=False)
        tabs = self.query_one(TabbedContent)
        keys = list(self._buffers)
        active = self.store.active_index() if self._initial is None else 0
        if keys:
            tabs.active = keys[min(max(active, 0), len(keys) - 1)]
        self.call_after_refresh(self._focus_active)

    def _focus_active(self) -> None:
        editor = self.active_editor
        if editor is not None:
            editor.focus()

    async def add_buffer(self, buffer: Buffer, *, activate: bool = True) -> CodeEditor:
        self._counter += 1
        key = f"buffer-{self._counter}"
        buffer.key = key
        self._buffers[key] = buffer
        editor = CodeEditor(buffer.text, id=f"{key}-editor")
        tabs = self.query_one(TabbedContent)
        await tabs.add_pane(TabPane(buffer.title, editor, id=key))
        row = min(buffer.cursor[0], editor.document.line_count - 1)
        editor.move_cursor((row, buffer.cursor[1]))
        if activate:
            tabs.active = key
            editor.focus()
        return editor

    @property
    def active_key(self) -> str | None:
        try:
            return self.query_one(TabbedContent).active or None
        except Exception:
            return None

    @property
    def active_editor(self) -> CodeEditor | None:
        key = self.active_key
        if not key:
            return None
        try:
            return self.query_one(f"#{key}-editor", CodeEditor)
        except Exception:
            return None

    @property
    def active_buffer(self) -> Buffer | None:
        key = self.active_key
        return self._buffers.get(key) if key else None

    def snapshot(self) -> list[Buffer]:
        """Every buffer with its current text and cursor."""
        out = []
        for key, buffer in self._buffers.items():
            try:
                editor = self.query_one(f"#{key}-editor", CodeEditor)
                buffer.text = editor.text
                buffer.cursor = editor.cursor_location
            except Exception:
                pass
            out.append(buffer)
        return out

    def persist(self) -> None:
        buffers = self.snapshot()
        keys = list(self._buffers)
        active = keys.index(self.active_key) if self.active_key in keys else 0
        self.store.save(buffers, active)

    async def action_new_buffer(self, text: str = "", title: str | None = None) -> None:
        await self.add_buffer(Buffer(title or f"untitled-{self._counter + 1}", text))

    async def action_close_buffer(self) -> None:
        key = self.active_key
        if key is None:
            return
        if len(self._buffers) == 1:
            editor = self.active_editor
            if editor is not None:
                editor.load_text("")
            return
        self._buffers.pop(key, None)
        await self.query_one(TabbedContent).remove_pane(key)
        self.call_after_refresh(self._focus_active)

    def action_next_tab(self) -> None:
        self._cycle(1)

    def action_previous_tab(self) -> None:
        self._cycle(-1)

    def _cycle(self, step: int) -> None:
        keys = list(self._buffers)
        if not keys:
            return
        current = self.active_key
        index = keys.index(current) if current in keys else 0
        self.query_one(TabbedContent).active = keys[(index + step) % len(keys)]
        self.call_after_refresh(self._focus_active)

    async def open_file(self, path: Path) -> None:
        """Open a file in a new buffer (or switch to it if it is open)."""
        for key, buffer in self._buffers.items():
            if buffer.path and Path(buffer.path).resolve() == path.resolve():
                self.query_one(TabbedContent).active = key
                return
        text = path.read_text(encoding="utf-8") if path.exists() else ""
        await self.add_buffer(Buffer(path.name, text, str(path)))

    def save_active(self, path: Path | None = None) -> Path | None:
        buffer, editor = self.active_buffer, self.active_editor
        if buffer is None or editor is None:
            return None
        target = path or (Path(buffer.path) if buffer.path else None)
        if target is None:
            return None
        target.write_text(editor.text, encoding="utf-8")
        buffer.path = str(target)
        buffer.title = target.name
        try:
            self.query_one(TabbedContent).get_tab(buffer.key).label = target.name
        except Exception:
            pass
        self.post_message(self.BufferSaved(str(target)))
        return target
