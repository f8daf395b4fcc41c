"""The value panel: inline values, paging a windowed value, the tree, copy, export."""

from __future__ import annotations

import io
import json
from contextlib import AbstractAsyncContextManager
from pathlib import Path
from typing import Any

import pytest
from rich.color import Color
from rich.style import Style
from textual.app import App, ComposeResult
from textual.message import Message
from textual.pilot import Pilot
from textual.theme import Theme
from textual.widgets import Input

from run_repl.present.whole_value import array_field, write_value
from run_repl.sandbox.result import RunErrorInfo, RunResult, ValueWindow
from run_repl.sandbox.wire.result_store import Page, ResultRefNotFound
from run_repl.sandbox.wire.value_window import itemize, leading_items
from run_repl.tui.components.value.lines import ValueLines
from run_repl.tui.components.value.model import (
    FIRST_PAGE_ONLY,
    GONE,
    PAGE_ITEMS,
    page_lines,
)
from run_repl.tui.components.value.tree import TREE_BATCH, ValueTree
from run_repl.tui.components.value.view import ValueView
from run_repl.tui.guest_text import safe_text

SIZE = (100, 30)
REF = "res_0123456789abcdef"


class FakePager:
    """`runner.expand` over a Python list: records every call, and can forget its ref."""

    def __init__(
        self, items: list[Any], path: str = "$", rest: dict[str, Any] | None = None
    ) -> None:
        self.items = items
        self.path = path
        self.rest = rest
        self.calls: list[tuple[str, int, int]] = []
        self.gone = False

    def __call__(self, ref: str, offset: int, limit: int) -> Page:
        self.calls.append((ref, offset, limit))
        if self.gone or ref != REF:
            raise ResultRefNotFound(ref)
        items = self.items[offset : offset + limit]
        return Page(
            ref=ref,
            offset=offset,
            items=items,
            total=len(self.items),
            has_more=offset + len(items) < len(self.items),
            path=self.path,
            rest=self.rest,
        )


def windowed(
    items: list[Any], shown: int, path: str = "$", rest: dict[str, Any] | None = None
) -> RunResult:
    kind = "array" if path == "$" else "string" if path == "$lines" else "object"
    return RunResult(
        status="ok",
        value_kind=kind,
        value_ref=REF,
        shown=shown,
        total=len(items),
        value_window=ValueWindow(path=path, items=items[:shown], rest=rest),
    )


def windowed_like_engine(value: Any) -> tuple[RunResult, FakePager]:
    """A result and pager cut from a value by the engine's own window rules."""
    itemized = itemize(value)
    shown = len(leading_items(itemized.items, itemized.rest))
    pager = FakePager(itemized.items, itemized.path, itemized.rest)
    return windowed(itemized.items, shown, itemized.path, itemized.rest), pager


@pytest.fixture(scope="module")
def million() -> list[dict[str, int]]:
    return [{"i": i} for i in range(1_000_000)]


class Harness(App[None]):
    """Only the panel, showing one result (or envelope) from the start."""

    def __init__(
        self,
        result: RunResult | None = None,
        pager: Any = None,
        envelope: dict[str, Any] | None = None,
    ) -> None:
        super().__init__()
        self.result, self.pager, self.envelope = result, pager, envelope
        self.copied: list[str] = []

    def compose(self) -> ComposeResult:
        yield ValueView()

    def on_mount(self) -> None:
        view = self.query_one(ValueView)
        if self.envelope is not None:
            view.show_stored(RunResult.model_validate(self.envelope), self.pager)
        else:
            view.show_result(self.result, self.pager)
        view.focus()

    def copy_to_clipboard(self, text: str) -> None:
        self.copied.append(text)


def screen_text(app: App[Any]) -> str:
    return "\n".join(strip.text for strip in app.screen._compositor.render_strips())


def run(
    app: Harness, messages: list[Message] | None = None
) -> AbstractAsyncContextManager[Pilot[None]]:
    hook = None if messages is None else messages.append
    return app.run_test(size=SIZE, message_hook=hook)


def posted(messages: list[Message], kind: type[Message]) -> list[Any]:
    """Each message once (the hook sees a bubbling message at every node it reaches)."""
    seen: dict[int, Message] = {}
    for m in messages:
        if isinstance(m, kind):
            seen.setdefault(id(m), m)
    return list(seen.values())


def pages(messages: list[Message]) -> list[tuple[int, int, int, str]]:
    return [(m.offset, m.count, m.total, m.path) for m in posted(messages, ValueView.PageChanged)]


# ---------------------------------------------------------------------- pure logic
def test_page_lines_maps_lines_to_items() -> None:
    texts, owners, starts = page_lines([{"a": 1}, 2], "$")
    assert texts == ["{", '  "a": 1', "}", "2"]
    assert owners == [0, 0, 0, 1]
    assert starts == [0, 3, 4]
    texts, _, _ = page_lines([{"key": "k", "value": [1]}], "$entries")
    assert texts == ['"k": [', "  1", "]"]


def test_safe_text_escapes_terminal_controls() -> None:
    assert safe_text("a\x1b[31mb\x9bc\u202ed") == "a\\u001b[31mb\\u009bc\\u202ed"
    assert safe_text("a\tb") == "a   b"


def test_array_field() -> None:
    assert array_field("$.rows") == "rows"
    assert array_field('$["odd key"]') == "odd key"
    assert array_field("$") is None and array_field("$entries") is None


@pytest.mark.parametrize(
    "value",
    [
        [],
        [1, {"a": [1, 2]}, "x"],
        {"count": 2, "rows": [{"i": 0}, {"i": 1}], "name": "t"},
        {"odd key": [1, 2, 3]},
        {"rows": []},
        {"a": 1, "b": {"c": None}},
        'one\ntwo\n"three"\n',
    ],
)
def test_write_value_rebuilds_the_value(value: Any) -> None:
    itemized = itemize(value)
    out = io.StringIO()
    count = write_value(out, itemized.path, itemized.rest, iter(itemized.items))
    assert count == len(itemized.items)
    assert json.loads(out.getvalue()) == value


# ---------------------------------------------------------------------- pilot tests
async def test_inline_value_shows_whole() -> None:
    value = {"name": "ada", "tags": ["x", "y"], "ok": True, "n": None}
    result = RunResult(
        status="ok", value=value, value_kind="object", value_ref=REF, shown=2, total=2
    )
    messages: list[Message] = []
    app = Harness(result, FakePager([]))
    async with run(app, messages) as pilot:
        await pilot.pause()
        text = screen_text(app)
        assert "object · 4 keys · inline" in text
        assert '"name": "ada",' in text and '"ok": true,' in text and '"n": null' in text
        assert pages(messages)[-1] == (0, 2, 2, "$.tags")
        await pilot.press("n")  # no pages inline: nothing happens
        assert app.pager.calls == []


async def test_undefined_and_error_results() -> None:
    messages: list[Message] = []
    app = Harness(RunResult(status="ok", value=None, value_kind="undefined"), None)
    async with run(app, messages) as pilot:
        await pilot.pause()
        assert "undefined" in screen_text(app)
        view = app.query_one(ValueView)
        error = RunResult(status="error", error=RunErrorInfo(code="RUN_EXCEPTION", message="boom"))
        view.show_result(error, None)
        await pilot.pause()
        assert pages(messages)[-1] == (0, 0, 0, "")
        assert "No value yet: F5 runs the snippet." in screen_text(app)
        assert view.page_items == ()


async def test_first_page_comes_from_the_window(million: list[dict[str, int]]) -> None:
    pager = FakePager(million)
    messages: list[Message] = []
    app = Harness(windowed(million, 66), pager)
    async with run(app, messages) as pilot:
        await pilot.pause()
        assert pager.calls == []
        view = app.query_one(ValueView)
        assert view.page_items == tuple(million[:66])
        assert pages(messages) == [(0, 66, 1_000_000, "$")]
        assert "$ · items 1–66 of 1,000,000" in screen_text(app)


async def test_next_and_previous_pages_have_no_gap_or_overlap(
    million: list[dict[str, int]],
) -> None:
    pager = FakePager(million, "$.rows", {"count": 1_000_000})
    messages: list[Message] = []
    app = Harness(windowed(million, 66, "$.rows", {"count": 1_000_000}), pager)
    async with run(app, messages) as pilot:
        view = app.query_one(ValueView)
        seen: list[dict[str, int]] = list(view.page_items)
        for _ in range(3):
            await pilot.press("n")
            seen.extend(view.page_items)
        assert seen == million[: 66 + 3 * PAGE_ITEMS]
        assert pager.calls == [(REF, 66, 100), (REF, 166, 100), (REF, 266, 100)]
        assert '$.rows · items 267–366 of 1,000,000 · rest: {"count": 1000000}' in screen_text(app)
        await pilot.press("p", "pageup")
        assert view.page_offset == 66 and view.page_items == tuple(million[66:166])
        await pilot.press("p")
        assert view.page_items == tuple(million[:66])
        assert pager.calls[-1] == (REF, 66, 100)  # the first page again came from the window
        await pilot.press("p")  # already on the first page
        await pilot.pause()
        assert pages(messages) == [
            (0, 66, 1_000_000, "$.rows"),
            (66, 100, 1_000_000, "$.rows"),
            (166, 100, 1_000_000, "$.rows"),
            (266, 100, 1_000_000, "$.rows"),
            (166, 100, 1_000_000, "$.rows"),
            (66, 100, 1_000_000, "$.rows"),
            (0, 66, 1_000_000, "$.rows"),
        ]


@pytest.mark.slow
async def test_jump_to_an_item(million: list[dict[str, int]]) -> None:
    pager = FakePager(million)
    app = Harness(windowed(million, 66), pager)
    async with run(app) as pilot:
        view = app.query_one(ValueView)
        await pilot.press("g")
        assert isinstance(app.focused, Input)
        await pilot.press(*"12345", "enter")
        assert view.page_offset == 12_266 and view.selected_number == 12_345
        assert view.page_items[view.selected_number - view.page_offset - 1] == {"i": 12_344}
        assert app.focused is view
        await pilot.pause()
        assert "items 12,267–12,366" in screen_text(app)
        view.jump_to(10)  # on the first page: no fetch
        calls = len(pager.calls)
        assert view.page_offset == 0 and view.selected_number == 10 and len(pager.calls) == calls
        view.jump_to(1_000_000)
        assert view.page_offset == 999_966 and len(view.page_items) == 34
        assert view.selected_number == 1_000_000
        await pilot.press("g", *"0", "enter")  # out of range: a warning, the page stays
        assert view.page_offset == 999_966
        await pilot.press("g", "x", "escape")  # escape closes the prompt
        assert app.focused is view and view.page_offset == 999_966


async def test_item_cursor_moves_across_pages(million: list[dict[str, int]]) -> None:
    pager = FakePager(million)
    app = Harness(windowed(million, 3), pager)
    async with run(app) as pilot:
        view = app.query_one(ValueView)
        assert view.selected_number == 1
        await pilot.press("down", "j")
        assert view.selected_number == 3
        await pilot.press("down")  # past the page's last item: the next page's first
        assert view.page_offset == 3 and view.selected_number == 4
        await pilot.press("end")
        assert view.selected_number == 103
        await pilot.press("home", "up")  # before the first item: the previous page's last
        assert view.page_offset == 0 and view.selected_number == 3
        await pilot.press("k", "k", "k")
        assert view.selected_number == 1


async def test_tree_shows_the_selected_item_and_adds_children_lazily() -> None:
    items = [
        {"i": i, "list": list(range(1000)), "nested": {"deep": [1, {"x": "y"}]}} for i in range(50)
    ]
    app = Harness(windowed(items, 2), FakePager(items))
    async with run(app) as pilot:
        view = app.query_one(ValueView)
        await pilot.press("down", "t")
        assert view.in_tree
        tree = view.query_one("#value-tree")
        root = tree.root
        assert [c.data.key for c in root.children] == ["i", "list", "nested"]
        big = root.children[1]
        assert len(big.children) == 0 and not big.is_expanded  # nothing added until it opens
        await pilot.press("down", "down", "space")  # open "list"
        await pilot.pause()
        assert len(big.children) == TREE_BATCH + 1  # a batch and a "more" node
        big.collapse()
        await pilot.pause()
        tree.move_cursor(big.children[-1])
        tree.select_node(big.children[-1])  # the "more" node adds the next batch
        await pilot.pause()
        assert len(big.children) == 2 * TREE_BATCH + 1
        assert "$[1] · tree" in screen_text(app)
        tree.move_cursor(root.children[2])
        await pilot.press("y")  # in the tree, y copies the node under the cursor
        assert json.loads(app.copied[-1]) == {"deep": [1, {"x": "y"}]}
        await pilot.press("t")
        assert not view.in_tree and app.focused is view
        await pilot.press("enter")
        assert view.in_tree
        await pilot.press("escape")
        assert not view.in_tree and view.selected_number == 2


async def test_copy_item_and_page(million: list[dict[str, int]]) -> None:
    app = Harness(windowed(million, 66), FakePager(million))
    async with run(app) as pilot:
        await pilot.press("down", "down", "y")
        assert json.loads(app.copied[-1]) == {"i": 2}
        assert app.copied[-1] == '{\n  "i": 2\n}'
        await pilot.press("n", "Y")
        assert json.loads(app.copied[-1]) == million[66:166]


async def test_copy_entries_and_lines() -> None:
    entries, entries_pager = windowed_like_engine({f"k{i}": {"v": i} for i in range(500)})
    app = Harness(entries, entries_pager)
    async with run(app) as pilot:
        await pilot.press("y")
        assert json.loads(app.copied[-1]) == {"k0": {"v": 0}}
        await pilot.press("Y")
        assert list(json.loads(app.copied[-1]))[:2] == ["k0", "k1"]
    text = "\n".join(f"line {i}\x1b[2J" for i in range(400))
    lines, lines_pager = windowed_like_engine(text)
    app = Harness(lines, lines_pager)
    async with run(app) as pilot:
        await pilot.pause()
        shown = screen_text(app)
        assert "line 0\\u001b[2J" in shown and "\x1b" not in shown  # escapes, never raw
        await pilot.press("y")
        assert app.copied[-1] == "line 0\x1b[2J"


async def export(
    app: Harness, pilot: Any, path: Path, messages: list[Message]
) -> ValueView.ExportFinished:
    await pilot.press("ctrl+e")
    prompt = app.query_one("#value-prompt-input", Input)
    assert prompt.value.startswith("./value-")
    prompt.value = str(path)
    await pilot.press("enter")
    await app.workers.wait_for_complete()
    await pilot.pause()
    done = posted(messages, ValueView.ExportFinished)
    assert done, "no ExportFinished"
    return done[-1]


@pytest.mark.slow
@pytest.mark.parametrize(
    "value",
    [
        [{"i": i, "s": "x" * (i % 7)} for i in range(25_000)],
        {"count": 25_000, "rows": [{"i": i} for i in range(25_000)], "meta": {"a": [1, 2]}},
        {f"key {i}": {"i": i} for i in range(3_000)},
    ],
    ids=["array", "rows", "entries"],
)
async def test_export_rebuilds_the_whole_value(value: Any, tmp_path: Path) -> None:
    result, pager = windowed_like_engine(value)
    assert result.value_window is not None and len(result.value_window.items) < result.total
    messages: list[Message] = []
    app = Harness(result, pager)
    async with run(app, messages) as pilot:
        done = await export(app, pilot, tmp_path / "out" / "value.json", messages)
        assert done.error is None and done.items == result.total
    assert json.loads((tmp_path / "out" / "value.json").read_text()) == value
    assert all(limit == 1000 for _, _, limit in pager.calls)


async def test_export_lines_and_inline(tmp_path: Path) -> None:
    text = "\n".join(f"row {i}" for i in range(1000)) + "\n"
    result, pager = windowed_like_engine(text)
    messages: list[Message] = []
    app = Harness(result, pager)
    async with run(app, messages) as pilot:
        await export(app, pilot, tmp_path / "v.txt", messages)
        await export(app, pilot, tmp_path / "v.json", messages)
    assert (tmp_path / "v.txt").read_text() == text
    assert json.loads((tmp_path / "v.json").read_text()) == text
    value = {"a": [1, 2, 3]}
    app = Harness(RunResult(status="ok", value=value, value_kind="object"), None)
    messages = []
    async with run(app, messages) as pilot:
        await export(app, pilot, tmp_path / "inline.json", messages)
    assert json.loads((tmp_path / "inline.json").read_text()) == value


async def test_export_of_a_gone_ref_fails_clearly(tmp_path: Path) -> None:
    items = [{"i": i} for i in range(5000)]
    pager = FakePager(items)
    messages: list[Message] = []
    app = Harness(windowed(items, 66), pager)
    async with run(app, messages) as pilot:
        pager.gone = True
        done = await export(app, pilot, tmp_path / "gone.json", messages)
        assert done.error == GONE
    assert not (tmp_path / "gone.json").exists()
    assert not list(tmp_path.iterdir())  # no partial file left behind


async def test_gone_ref_keeps_the_page_and_says_so(million: list[dict[str, int]]) -> None:
    pager = FakePager(million)
    messages: list[Message] = []
    app = Harness(windowed(million, 66), pager)
    async with run(app, messages) as pilot:
        view = app.query_one(ValueView)
        await pilot.press("n")
        pager.gone = True
        await pilot.press("n")
        await pilot.pause()
        assert view.page_offset == 66 and view.page_items == tuple(million[66:166])
        assert view.notice == GONE
        assert GONE in screen_text(app)
        assert len(pages(messages)) == 2


async def test_envelope_from_history(million: list[dict[str, int]]) -> None:
    envelope = windowed(million[:1000], 66).model_dump(mode="json")
    pager = FakePager(million)
    pager.gone = True
    app = Harness(envelope=envelope, pager=pager)
    async with run(app) as pilot:
        await pilot.pause()
        view = app.query_one(ValueView)
        assert view.notice == GONE and GONE in screen_text(app)
        assert view.page_items == tuple(million[:66])
        view.jump_to(5)  # the stored first page still works
        assert view.selected_number == 5
        view.show_stored(RunResult.model_validate(envelope), None)
        await pilot.pause()
        assert view.notice == FIRST_PAGE_ONLY
        await pilot.press("n")
        assert view.page_offset == 0
        view.show_stored(windowed(million[:1000], 66), FakePager(million[:1000]))
        await pilot.press("n")
        assert view.notice is None and view.page_offset == 66


async def test_real_runner_end_to_end() -> None:
    from run_repl import create_runner

    runner = create_runner()
    result = await runner.run("Array.from({length: 5000}, (_, i) => ({i}))")
    assert result.ok and result.value_window is not None
    shown = len(result.value_window.items)
    messages: list[Message] = []
    app = Harness(result, runner.expand)
    async with run(app, messages) as pilot:
        view = app.query_one(ValueView)
        await pilot.press("n")
        assert view.page_items == tuple({"i": i} for i in range(shown, shown + PAGE_ITEMS))
        view.jump_to(5000)
        assert view.page_items[-1] == {"i": 4999}
        assert pages(messages)[0] == (0, shown, 5000, "$")


async def test_colours_follow_the_theme(million: list[dict[str, int]]) -> None:
    app = Harness(windowed(million, 66), FakePager(million))
    async with run(app) as pilot:
        await pilot.pause()
        lines = app.query_one("#value-lines", ValueLines)
        dark = lines._palette()["number"]
        app.theme = "textual-light"
        await pilot.pause()
        assert lines._palette()["number"] != dark
        # A theme's syntax colours (as the app's themes carry them) win.
        syntax = Theme(
            name="syntax-test",
            primary="#336699",
            dark=True,
            variables={"syntax-number": "#123456", "syntax-string": "#654321"},
        )
        app.register_theme(syntax)
        app.theme = "syntax-test"
        await pilot.press("t")
        assert lines._palette()["number"].color == Color.parse("#123456")
        tree = app.query_one(ValueTree)
        label = tree.render_label(tree.root.children[0], Style(), Style())
        assert any(span.style.color == Color.parse("#123456") for span in label.spans)


# ---------------------------------------------------------------------- snapshots
class SnapshotApp(Harness):
    """A fixed windowed value for the snapshot tests."""

    def __init__(self) -> None:
        items = [
            {
                "id": i,
                "name": f"user {i}",
                "active": i % 2 == 0,
                "score": i * 1.5,
                "tags": ["a", "b"],
                "boss": None,
            }
            for i in range(2_000)
        ]
        result, pager = windowed_like_engine({"count": 2_000, "rows": items})
        super().__init__(result, pager)


def test_snapshot_first_page(snap_compare: Any) -> None:
    """The records as JSON lines (r from the table)."""
    assert snap_compare(SnapshotApp(), terminal_size=SIZE, press=["r", "down"])


def test_snapshot_table(snap_compare: Any) -> None:
    """The records as a table, sorted by score, highest first, on the column cursor."""
    assert snap_compare(
        SnapshotApp(), terminal_size=SIZE, press=["down", "right", "right", "right", "s", "s"]
    )


def test_snapshot_tree(snap_compare: Any) -> None:
    assert snap_compare(
        SnapshotApp(),
        terminal_size=SIZE,
        press=["down", "t", "down", "down", "down", "down", "down", "space"],
    )
