"""The editor: tabs of TypeScript buffers that persist across restarts, like an editor's.

Highlighting is tree-sitter-typescript (Textual's JavaScript query plus the
TypeScript one); a buffer past LARGE_BUFFER_LINES falls back to plain text so
typing stays instant.

Restoring is lazy: every saved buffer gets a tab at once, but only the active
one gets an editor (a TextArea with its parser); the others get theirs when
first shown, so the first paint does not grow with the number of buffers.
A tab marks unsaved changes (●); closing a modified buffer asks; closed
buffers can be reopened; untitled buffers are kept only while they hold text.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, ClassVar

from textual import events, on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.css.query import NoMatches
from textual.geometry import Offset
from textual.message import Message
from textual.widget import Widget
from textual.widgets import ContentSwitcher, Tab, Tabs, TextArea

from ....host.loader import FunctionInfo
from ....present.completion import Candidate, call_at, complete, scan, word_before
from ....present.files import atomic_write_text
from ...themes import present_styles
from ..completion_menu import CompletionMenu, SignatureHint
from .buffers import Buffer, BufferStore, Restored

if TYPE_CHECKING:
    from tree_sitter import Query

LARGE_BUFFER_LINES = 5000
LANGUAGE = "typescript"
DEFAULT_SOURCE = """// {run} runs · {help} help
const [customer] = await crm.listAccounts()
return await store.listOrders(customer.id)
"""
OTHER_HOST_SOURCE = """// {run} runs · {help} help
// This host has {some}: the catalog lists them all.
"""
NAMED_IN_THE_HINT = 3


def default_source(
    run: str = "F5 or ctrl+j",
    help: str = "F1",
    functions: Sequence[FunctionInfo] | None = None,
) -> str:
    """The first buffer's snippet, its comment naming the keys that run and help now.
    The demo's example calls the demo's functions; another host's first buffer names a
    few of its own instead of a call that could only fail there."""
    if functions is None:
        return DEFAULT_SOURCE.format(run=run, help=help)
    named = [f.js_signature for f in functions[:NAMED_IN_THE_HINT]]
    more = len(functions) - len(named)
    some = ", ".join(named) + (f" and {more} more" if more > 0 else "") if named else "no functions"
    return OTHER_HOST_SOURCE.format(run=run, help=help, some=some)


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
    language = Language(tree_sitter_typescript.language_typescript())
    _share_compiled_query(language)
    return language, query


def _share_compiled_query(language: object) -> None:
    """Textual compiles the highlight query again for every document it makes (a new
    buffer, each `load_text`): about 20 ms for TypeScript's, felt as a pause on
    ctrl+n. A compiled query is only read (each lookup makes its own cursor), so
    documents in this language share one."""
    from textual.document._syntax_aware_document import SyntaxAwareDocument

    compile_query = SyntaxAwareDocument.prepare_query
    compiled: dict[str, Query | None] = {}

    def prepare_query(document: SyntaxAwareDocument, query: str) -> Query | None:
        if document.language is not language:
            return compile_query(document, query)
        if query not in compiled:
            compiled[query] = compile_query(document, query)
        return compiled[query]

    # A private method, patched for the whole process: tests/tui/test_textual_private_apis.py
    # fails when Textual moves it or changes its signature.
    SyntaxAwareDocument.prepare_query = prepare_query  # type: ignore[method-assign,assignment]  # see above


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
- **F6**: the approvals inbox: every approval waiting in the store, from any process
- **ctrl+n** new tab, **F8** open a file, **ctrl+s** save
- **ctrl+w** close the tab (it asks first when ● marks unsaved changes), **ctrl+t** reopen
  the last closed tab
- **ctrl+pagedown** / **ctrl+pageup** (or **alt+→** / **alt+←**): next / previous tab
- **ctrl+home** / **ctrl+end**: the start / end of the buffer (with **shift**: select to it)

Host functions complete as you type (`crm.` offers crm's functions; a mistyped
name is offered what a run would suggest): **↑/↓** choose, **tab** or **enter**
take it, **escape** closes; **ctrl+space** asks for them. Inside a host call the
line above shows its parameters, the one you type in bold. **F9**: the doc of
the host function at the cursor. **ctrl+b** shows or hides the host catalog.
"""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("ctrl+home", "document_start", "Start of buffer", id="editor.start", show=False),
        Binding("ctrl+end", "document_end", "End of buffer", id="editor.end", show=False),
        Binding(
            "ctrl+shift+home",
            "document_start(True)",
            "Select to start",
            id="editor.select_to_start",
            show=False,
        ),
        Binding(
            "ctrl+shift+end",
            "document_end(True)",
            "Select to end",
            id="editor.select_to_end",
            show=False,
        ),
        Binding("ctrl+space,ctrl+@", "complete", "Complete", id="editor.complete", show=False),
        Binding("f9", "function_doc", "Doc", id="editor.doc", show=False),
    ]

    @dataclass
    class ShowDoc(Message):
        """Show this host function's doc (F9)."""

        info: FunctionInfo

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
            self.register_language(LANGUAGE, lang[0], lang[1])  # type: ignore[arg-type]  # a tree_sitter Language, typed object to keep it lazy
        self._apply_language()

        self.functions: list[FunctionInfo] = []
        """The host's functions, for completion (the app gives them: `host_functions`)."""
        self.offers: list[Candidate] = []
        self.offer_index = 0
        self._word = ""
        self._inserted_closer: tuple[int, int, int] | None = None
        """The `)` a completion put after the cursor: (row, column of its `(`, characters
        after the `)` on that row). Typing `)` there steps over it, as editors do; it is
        forgotten once the cursor leaves the parentheses or the row."""

    def on_mount(self) -> None:
        style = getattr(self.app, "style_editor", None)
        if style is not None:
            style(self)  # the app theme's syntax colours, for editors made after the start
        self.functions = list(getattr(self.app, "host_functions", []))

    # ------------------------------------------------------------------ completion
    def _before_cursor(self) -> str:
        row, column = self.cursor_location
        return self.document.get_text_range((max(0, row - 80), 0), (row, column))

    def _overlays(self) -> tuple[CompletionMenu, SignatureHint] | None:
        try:
            return self.screen.query_one(CompletionMenu), self.screen.query_one(SignatureHint)
        except NoMatches:
            return None

    def assist(self, *, open_menu: bool, force: bool = False) -> None:
        """Update what is offered at the cursor: the completions (opened only when
        `open_menu`: as a word is typed, or asked for), and the signature hint."""
        overlays = self._overlays()
        if overlays is None or not self.functions:
            return
        menu, hint = overlays
        before = self._before_cursor()
        found = scan(before)
        word = word_before(before) if found.in_code and not self.selected_text else None
        offers: list[Candidate] = []
        if word is not None and (open_menu or menu.is_open):
            long_enough = force or "." in word or len(word) >= 2
            offers = complete(self.functions, word) if long_enough else []
        elif force and found.in_code and not self.selected_text:
            word = ""
            offers = complete(self.functions, "")
        styles = present_styles(self.app.current_theme)
        cursor = self.cursor_screen_offset
        if offers:
            if offers != self.offers:
                self.offer_index = 0
            self.offers, self._word = offers, word or ""
            start = Offset(cursor.x - len(self._word), cursor.y)
            menu.show(offers, self.offer_index, start, styles)
        else:
            self.close_offers()
        call = call_at(self.functions, before)
        if call is not None:
            hint.show(call[0], call[1], Offset(cursor.x, cursor.y), styles, self.content_region)
        else:
            hint.close()

    def close_offers(self) -> None:
        self.offers = []
        overlays = self._overlays()
        if overlays is not None:
            overlays[0].close()

    def close_assist(self) -> None:
        self.close_offers()
        overlays = self._overlays()
        if overlays is not None:
            overlays[1].close()

    def take_offer(self) -> None:
        """Put the highlighted offer in place of the word typed so far."""
        if not self.offers:
            return
        offer = self.offers[self.offer_index]
        row, column = self.cursor_location
        start = (row, column - len(self._word))
        line = self.document.get_line(row)
        text = offer.text
        call = offer.kind == "function" and not line[column:].lstrip().startswith("(")
        self.replace(text + ("()" if call else ""), start, (row, column))
        if call:
            opening = start[1] + len(text)
            self.move_cursor((row, opening + 1))
            after = len(self.document.get_line(row)) - (opening + 2)  # past the `)`
            self._inserted_closer = (row, opening, after)
        self.close_offers()
        # A namespace goes on to offer its members; a call shows its parameters.
        self.assist(open_menu=offer.kind == "namespace")

    async def _on_key(self, event: events.Key) -> None:
        if self.offers and event.key in (
            "up",
            "down",
            "pageup",
            "pagedown",
            "tab",
            "enter",
            "escape",
        ):
            event.stop()
            event.prevent_default()
            if event.key in ("tab", "enter"):
                self.take_offer()
            elif event.key == "escape":
                self.close_offers()
            else:
                step = {"up": -1, "down": 1, "pageup": -8, "pagedown": 8}[event.key]
                self.offer_index = max(0, min(len(self.offers) - 1, self.offer_index + step))
                self.assist(open_menu=True)
            return
        if event.character == ")" and self._at_inserted_closer():
            event.stop()
            event.prevent_default()
            self._inserted_closer = None
            row, column = self.cursor_location
            self.move_cursor((row, column + 1))
            self.assist(open_menu=False)
            return
        await super()._on_key(event)
        if event.is_printable:
            self.assist(open_menu=True)

    def _closer_column(self) -> int | None:
        """Where the `)` a completion inserted is now, if the cursor is still inside its
        parentheses on its row and it is still there; else None (and it is forgotten)."""
        if self._inserted_closer is None:
            return None
        row, opening, after = self._inserted_closer
        cursor_row, column = self.cursor_location
        line = self.document.get_line(cursor_row) if cursor_row == row else ""
        closer = len(line) - after - 1
        inside = cursor_row == row and opening < column <= closer and not self.selected_text
        if not inside or line[opening : opening + 1] != "(" or line[closer : closer + 1] != ")":
            self._inserted_closer = None
            return None
        return closer

    def _at_inserted_closer(self) -> bool:
        closer = self._closer_column()
        return closer is not None and self.cursor_location[1] == closer

    @on(TextArea.SelectionChanged)
    def _moved(self) -> None:
        self._closer_column()  # forgets the inserted `)` once the cursor leaves it
        if self.has_focus:
            self.assist(open_menu=False)

    def on_blur(self) -> None:
        self.close_assist()

    def action_document_start(self, select: bool = False) -> None:
        self.move_cursor(self.document.start, select=select)

    def action_document_end(self, select: bool = False) -> None:
        self.move_cursor(self.document.end, select=select)

    def action_complete(self) -> None:
        self.assist(open_menu=True, force=True)

    def function_at_cursor(self) -> FunctionInfo | None:
        """The host function named at the cursor, else the one whose call it is in."""
        row, column = self.cursor_location
        line = self.document.get_line(row)
        end = column
        while end < len(line) and (line[end].isalnum() or line[end] in "_$."):
            end += 1
        word = word_before(line[:end])
        by_path = {f.path: f for f in self.functions}
        if word and word.rstrip(".") in by_path:
            return by_path[word.rstrip(".")]
        call = call_at(self.functions, self._before_cursor())
        return call[0] if call else None

    def action_function_doc(self) -> None:
        info = self.function_at_cursor()
        if info is None:
            self.notify(
                "No host function at the cursor: put it on a name like crm.getAccount, "
                "or inside a call's parentheses.",
                title="Doc",
                severity="warning",
            )
            return
        self.post_message(self.ShowDoc(info))

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


MAX_CLOSED = 20  # closed buffers that ctrl+t can bring back


class EditorTabs(Vertical):
    """Tabs of buffers. The app asks it for the active editor and its text."""

    # Priority bindings: handled as the key arrives, before the keys after it reach an
    # editor, so what is typed right after ctrl+n lands in the new tab. (ctrl+w also
    # goes before the TextArea's own: delete word left, which ctrl+backspace still does.)
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("ctrl+n", "new_buffer", "New tab", id="editor.new", show=False, priority=True),
        Binding(
            "ctrl+w", "close_buffer", "Close tab", id="editor.close", priority=True, show=False
        ),
        Binding(
            "ctrl+t",
            "reopen_buffer",
            "Reopen closed tab",
            id="editor.reopen",
            show=False,
            priority=True,
        ),
        # The TextArea would also take ctrl+pageup/pagedown, to scroll sideways.
        Binding(
            "ctrl+pagedown,alt+right",
            "next_tab",
            "Next tab",
            id="editor.next_tab",
            show=False,
            priority=True,
        ),
        Binding(
            "ctrl+pageup,alt+left",
            "previous_tab",
            "Previous tab",
            id="editor.previous_tab",
            show=False,
            priority=True,
        ),
    ]

    DEFAULT_CSS = """
    EditorTabs > #editor-switcher { height: 1fr; }
    """

    def __init__(
        self,
        store: BufferStore,
        *,
        initial: list[Buffer] | None = None,
        first_source: str | None = None,
        id: str | None = None,
    ) -> None:
        super().__init__(id=id)
        self.store = store
        self._counter = 0
        self._buffers: dict[str, Buffer] = {}
        self._recently_closed: list[Buffer] = []
        self._focus_before_reveal: Widget | None = None
        self._activated_by_show: str | None = None
        self.problem: str | None = None
        restored = Restored(initial) if initial is not None else store.load()
        self.problem = restored.problem
        buffers = [b for b in restored.buffers if b.worth_keeping] or [
            Buffer("untitled", first_source if first_source is not None else default_source())
        ]
        active = min(max(restored.active, 0), len(buffers) - 1)
        if initial is None and restored.buffers and restored.active < len(restored.buffers):
            wanted = restored.buffers[restored.active]
            active = buffers.index(wanted) if wanted in buffers else 0
        for buffer in buffers:
            self._register(buffer)
        self._first_active = buffers[active].key

    def _register(self, buffer: Buffer) -> str:
        self._counter += 1
        buffer.key = f"buffer-{self._counter}"
        self._buffers[buffer.key] = buffer
        return buffer.key

    def compose(self) -> ComposeResult:
        # The active tab now; the others just after the first paint (`_add_other_tabs`).
        yield Tabs(
            Tab(self._label(self._buffers[self._first_active]), id=self._first_active),
            active=self._first_active,
            id="editor-tabs",
        )
        # Only the active buffer gets an editor now: the others when first shown.
        with ContentSwitcher(initial=f"{self._first_active}-editor", id="editor-switcher"):
            yield self._make_editor(self._buffers[self._first_active])

    def on_mount(self) -> None:
        if len(self._buffers) > 1:
            # After the first frame is on the screen, not in the pass that paints it.
            self.call_after_refresh(self.call_after_refresh, self._add_other_tabs)

    async def _add_other_tabs(self) -> None:
        keys = list(self._buffers)
        index = keys.index(self._first_active)
        strip = self.tabs.query_one("#tabs-list")
        before = [Tab(self._label(self._buffers[k]), id=k) for k in keys[:index]]
        after = [Tab(self._label(self._buffers[k]), id=k) for k in keys[index + 1 :]]
        if before:
            await strip.mount_all(before, before=0)
        if after:
            await strip.mount_all(after)
        self._reveal_after_refresh()

    def _make_editor(self, buffer: Buffer) -> CodeEditor:
        editor = CodeEditor(buffer.text, id=f"{buffer.key}-editor")
        row = min(buffer.cursor[0], editor.document.line_count - 1)
        editor.move_cursor((row, buffer.cursor[1]))
        return editor

    @staticmethod
    def _label(buffer: Buffer) -> str:
        return f"{buffer.title} ●" if buffer.modified else buffer.title

    # ------------------------------------------------------------------ looking up
    @property
    def tabs(self) -> Tabs:
        return self.query_one("#editor-tabs", Tabs)

    @property
    def active_key(self) -> str | None:
        try:
            return self.tabs.active or None
        except NoMatches:
            return None

    def editor_for(self, key: str) -> CodeEditor | None:
        try:
            return self.query_one(f"#{key}-editor", CodeEditor)
        except NoMatches:
            return None

    @property
    def active_editor(self) -> CodeEditor | None:
        key = self.active_key
        return self.editor_for(key) if key else None

    @property
    def active_buffer(self) -> Buffer | None:
        key = self.active_key
        return self._buffers.get(key) if key else None

    @property
    def buffers(self) -> list[Buffer]:
        """The buffers in tab order (texts as of the last edit)."""
        return list(self._buffers.values())

    def snapshot(self) -> list[Buffer]:
        """Every buffer with its current text and cursor."""
        for key, buffer in self._buffers.items():
            editor = self.editor_for(key)
            if editor is not None:
                self._set_text(buffer, editor.text)
                buffer.cursor = editor.cursor_location
        return list(self._buffers.values())

    def persist(self) -> None:
        buffers = self.snapshot()
        keys = list(self._buffers)
        active = keys.index(self.active_key) if self.active_key in keys else 0
        self.store.save(buffers, active)

    # ------------------------------------------------------------------ showing
    @on(Tabs.TabActivated, "#editor-tabs")
    async def _tab_activated(self, event: Tabs.TabActivated) -> None:
        event.stop()
        if event.tab.id == self._activated_by_show:
            # The echo of show() setting the active tab: shown and focused already (a
            # second focus would take it back from a panel chosen meanwhile).
            self._activated_by_show = None
            return
        if event.tab.id in self._buffers:
            await self.show(event.tab.id)

    async def show(self, key: str) -> None:
        """Make `key` the active buffer: its editor made if need be, shown, and focused at
        once, so the keys typed next land in it (not in the buffer that was active)."""
        if self.tabs.active != key:
            self.tabs.active = key
            self._activated_by_show = key  # its TabActivated is on its way
        switcher = self.query_one(ContentSwitcher)
        editor = self.editor_for(key)
        if editor is None:
            editor = self._make_editor(self._buffers[key])
            await switcher.add_content(editor)
        switcher.current = editor.id
        self.screen.set_focus(editor)
        self._reveal_after_refresh()

    def _reveal_after_refresh(self) -> None:
        # The focus as it is now: a key pressed before the refresh (F4, ctrl+o v: a fast
        # typist or a macro) may move it to another panel, and the refresh must not
        # take it back.
        self._focus_before_reveal = self.screen.focused
        self.call_after_refresh(self._reveal_active)

    def _reveal_active(self) -> None:
        # The strip scrolls so the active tab shows, even right after it was added.
        tab = self.tabs.active_tab
        if tab is not None:
            # force: the strip hides its scroll bar (overflow hidden), and a scroll that is
            # not forced does not move what cannot be scrolled by hand.
            self.tabs.query_one("#tabs-scroll").scroll_to_widget(tab, animate=False, force=True)
            # Tabs mounted before the active one move it: its underline follows (what
            # Tabs.add_tab does after a refresh, too).
            self.tabs._highlight_active(animate=False)
        editor = self.active_editor
        if editor is not None and self.screen.focused is self._focus_before_reveal:
            editor.focus()

    @on(TextArea.Changed)
    def _edited(self, event: TextArea.Changed) -> None:
        key = (event.text_area.id or "").removesuffix("-editor")
        buffer = self._buffers.get(key)
        if buffer is None:
            return
        self._set_text(buffer, event.text_area.text)

    def _set_text(self, buffer: Buffer, text: str) -> None:
        was = buffer.modified
        buffer.text = text
        if buffer.modified != was:
            self._relabel(buffer)

    def _relabel(self, buffer: Buffer) -> None:
        try:
            self.tabs.query_one(f"#{buffer.key}", Tab).label = self._label(buffer)
        except NoMatches:
            pass

    # ------------------------------------------------------------------ adding, closing
    async def add_buffer(self, buffer: Buffer, *, activate: bool = True) -> None:
        key = self._register(buffer)
        await self.tabs.add_tab(Tab(self._label(buffer), id=key))
        if activate:
            await self.show(key)

    async def action_new_buffer(self, text: str = "", title: str | None = None) -> None:
        await self.add_buffer(Buffer(title or f"untitled-{self._counter + 1}", text))

    def action_close_buffer(self) -> None:
        editor = self.active_editor
        if editor is None:
            return
        # Keys typed just before ctrl+w may still wait in the editor's queue (a priority
        # key is handled first): decide after them, or their text would close unasked.
        editor.call_later(self._close_active)

    async def _close_active(self) -> None:
        buffer = self.active_buffer
        if buffer is None:
            return
        self.snapshot()
        if not buffer.modified:
            await self.close(buffer)
            return
        from .confirm_close import ConfirmClose

        async def answered(choice: str | None) -> None:
            if choice == "discard":
                await self.close(buffer)
            elif choice == "save":
                await self._save_then_close(buffer)

        self.app.push_screen(ConfirmClose(buffer.title, buffer.path), answered)

    async def _save_then_close(self, buffer: Buffer) -> None:
        if buffer.path is None:
            self.post_message(self.SaveAsRequested(buffer.key))
            return
        try:
            self.save(buffer, Path(buffer.path))
        except OSError as exc:
            self.notify(f"Cannot save {buffer.path}: {exc}", severity="error")
            return
        await self.close(buffer)

    async def close(self, buffer: Buffer) -> None:
        """Close a buffer at once (ctrl+t brings it back); the last one leaves an empty one."""
        self.snapshot()
        if buffer.worth_keeping:
            self._recently_closed.append(buffer)
            del self._recently_closed[:-MAX_CLOSED]
        key = buffer.key
        keys = list(self._buffers)
        self._buffers.pop(key, None)
        if not self._buffers:
            await self.action_new_buffer()
        elif self.active_key == key:
            index = keys.index(key)
            await self.show(keys[index + 1] if index + 1 < len(keys) else keys[index - 1])
        await self.tabs.remove_tab(key)
        editor = self.editor_for(key)
        if editor is not None:
            await editor.remove()

    async def action_reopen_buffer(self) -> None:
        if not self._recently_closed:
            self.notify("No closed tab to reopen.", severity="warning")
            return
        buffer = self._recently_closed.pop()
        await self.add_buffer(
            Buffer(buffer.title, buffer.text, buffer.path, buffer.cursor, buffer.saved)
        )

    async def action_next_tab(self) -> None:
        await self._cycle(1)

    async def action_previous_tab(self) -> None:
        await self._cycle(-1)

    async def _cycle(self, step: int) -> None:
        keys = list(self._buffers)
        if not keys:
            return
        current = self.active_key
        index = keys.index(current) if current in keys else 0
        await self.show(keys[(index + step) % len(keys)])

    # ------------------------------------------------------------------ files
    async def open_file(self, path: Path) -> None:
        """Open a file in a new buffer (or switch to it if it is open)."""
        for key, buffer in self._buffers.items():
            if buffer.path and Path(buffer.path).resolve() == path.resolve():
                await self.show(key)
                return
        text = path.read_text(encoding="utf-8") if path.exists() else ""
        await self.add_buffer(Buffer(path.name, text, str(path)))

    def save(self, buffer: Buffer, path: Path) -> Path:
        """Write a buffer to `path`; it is the buffer's file from now on, unmodified."""
        self.snapshot()
        atomic_write_text(path, buffer.text)  # a full disk never leaves half a file
        buffer.path = str(path)
        buffer.title = path.name
        buffer.saved = buffer.text
        self._relabel(buffer)
        return path

    def save_active(self, path: Path | None = None) -> Path | None:
        buffer = self.active_buffer
        if buffer is None:
            return None
        target = path or (Path(buffer.path) if buffer.path else None)
        if target is None:
            return None
        return self.save(buffer, target)

    @dataclass
    class SaveAsRequested(Message):
        """A buffer with no file must be saved before it closes: ask where."""

        key: str
