"""Pilot and snapshot tests for the modal screens: history, call detail, help."""

from __future__ import annotations

import io
import time
from collections.abc import Iterator
from typing import Any

import pytest
from rich.console import Console
from textual.app import App
from textual.message import Message
from textual.widgets import DataTable, Input, Markdown, Static

from run_repl.present.styled import plain_lines
from run_repl.sandbox.result import CallRecord
from run_repl.store import MemoryStore
from run_repl.store.records import RunRecord
from run_repl.tui.screens.call_detail import (
    CallDetailScreen,
    call_detail_text,
    payload_lines,
)
from run_repl.tui.screens.help import HelpScreen, group_bindings
from run_repl.tui.screens.history import (
    HistoryScreen,
    OpenSource,
    ShowStored,
    result_summary,
)
from run_repl.tui.themes import load_themes

# A fixed past moment, so the "When" column shows a date that never changes.
T0 = 1_700_000_000.0

OK_SOURCE = """\
// The three latest orders of a customer
const orders = await store.listOrders({ customerId: "cus_1", limit: 3 });
return orders.map((o) => ({ id: o.id, total: o.total }));
"""
ERROR_SOURCE = 'const account = await crm.getAcount("acc_9");\naccount.name;\n'
INTERRUPTED_SOURCE = 'await documents.publish("draft_7");\n'


def _runs() -> list[RunRecord]:
    return [
        RunRecord(
            id="run-ok-0001",
            started_at=T0,
            duration_ms=42.0,
            status="ok",
            source=OK_SOURCE,
            envelope={
                "status": "ok",
                "value": [{"id": "ord_1", "total": 120}, {"id": "ord_2", "total": 75}],
                "value_kind": "array",
                "duration_ms": 42.0,
                "calls": [{"seq": 1, "path": "store.listOrders", "args_preview": "(…)"}],
                "logs": [],
            },
        ),
        RunRecord(
            id="run-err-0002",
            started_at=T0 + 60,
            duration_ms=8.0,
            status="error",
            source=ERROR_SOURCE,
            error_code="RUN_UNKNOWN_MEMBER",
            envelope={
                "status": "error",
                "duration_ms": 8.0,
                "error": {
                    "code": "RUN_UNKNOWN_MEMBER",
                    "message": "crm.getAcount does not exist. Did you mean crm.getAccount?",
                    "line": 1,
                    "column": 23,
                },
            },
        ),
        RunRecord(
            id="run-int-0003",
            started_at=T0 + 120,
            duration_ms=1500.0,
            status="interrupted",
            source=INTERRUPTED_SOURCE,
            envelope={
                "status": "interrupted",
                "duration_ms": 1500.0,
                "interruptions": [
                    {"id": "int_1", "path": "documents.publish", "args": ["draft_7"]}
                ],
            },
        ),
    ]


class HistoryStore(MemoryStore):
    """The real memory store, holding these runs; it notes each search the screen makes."""

    def __init__(self, runs: list[RunRecord]) -> None:
        super().__init__()
        self.queries: list[str | None] = []
        for run in runs:
            self.record_run(run)

    def list_runs(self, limit: int = 50, query: str | None = None) -> list[RunRecord]:
        self.queries.append(query)
        return super().list_runs(limit, query)


class _Harness(App[None]):
    """Registers the shipped themes, uses run-repl-dark, and opens one screen."""

    def __init__(self) -> None:
        super().__init__()
        for theme in load_themes()[0]:
            self.register_theme(theme.app_theme)
        self.theme = "run-repl-dark"

    def make_screen(self) -> Any:
        raise NotImplementedError

    answers: list[Any]

    def on_mount(self) -> None:
        self.answers = []
        self.push_screen(self.make_screen(), self.answers.append)


class HistoryApp(_Harness):
    def __init__(self, store: HistoryStore | None = None) -> None:
        super().__init__()
        self.store = store or HistoryStore(_runs())

    def make_screen(self) -> HistoryScreen:
        return HistoryScreen(self.store)


def _failed_call() -> CallRecord:
    return CallRecord(
        seq=3,
        path="billing.listInvoices",
        args_preview='({customerId: "cus_1", status: "open"})',
        ok=False,
        duration_ms=12.5,
        error_code="RUN_HOST_FUNCTION_ERROR",
        error_message="billing.listInvoices() raised KeyError: 'cus_1'",
        started_at_ms=4.25,
        args_text='[{"customerId":"cus_1","status":"open"}]',
        traceback=(
            "Traceback (most recent call last):\n"
            '  File "demo_host.py", line 88, in list_invoices\n'
            "    return INVOICES[customer_id]\n"
            "KeyError: 'cus_1'\n"
        ),
    )


def _approved_call() -> CallRecord:
    return CallRecord(
        seq=5,
        path="documents.publish",
        args_preview='("draft_7")',
        ok=True,
        duration_ms=3.0,
        decision="approved",
        wait_ms=8400.0,
        replayed=False,
        started_at_ms=1.0,
        args_text='["draft_7"]',
        result_text='{"published":true,"url":"https://example.test/d/7"}',
    )


class CallDetailApp(_Harness):
    def __init__(self, call: CallRecord) -> None:
        super().__init__()
        self.call = call

    def make_screen(self) -> CallDetailScreen:
        return CallDetailScreen(self.call)


BINDINGS = [
    ("ctrl+r", "Run", "editor.run"),
    ("ctrl+c", "Cancel the run", "editor.cancel"),
    ("ctrl+h", "History", "app.history"),
    ("f1", "Help", "help"),
    ("tab", "Focus next", ""),
]
FOCUSED_HELP = "## Editor\n\nWrite **TypeScript**; the last expression is the result."


class HelpApp(_Harness):
    def __init__(self, focused_help: str | None) -> None:
        super().__init__()
        self.focused_help = focused_help

    def make_screen(self) -> HelpScreen:
        return HelpScreen(self.focused_help, BINDINGS)


def _plain(content: object, width: int = 120) -> str:
    console = Console(width=width, file=io.StringIO(), color_system=None, record=True)
    console.print(content)
    return console.export_text()


def _static_text(app: App[Any], selector: str) -> str:
    return _plain(app.screen.query_one(selector, Static).content)


@pytest.fixture
def utc() -> Iterator[None]:
    # Times in the table are local: pin the zone so they (and the snapshots) never move.
    old = time.tzname
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("TZ", "UTC")
        time.tzset()
        yield
    time.tzset()
    assert time.tzname == old


async def _settle(app: App[Any], pilot: Any) -> None:
    await app.workers.wait_for_complete()
    await pilot.pause()


# ------------------------------------------------------------------ history


async def test_history_lists_runs_newest_first_and_previews_the_selected_one(utc: None) -> None:
    app = HistoryApp()
    async with app.run_test(size=(120, 32)) as pilot:
        await _settle(app, pilot)
        screen = app.screen
        assert isinstance(screen, HistoryScreen)
        table = screen.query_one("#history-runs", DataTable)
        assert [table.get_row_at(i)[1].plain for i in range(table.row_count)] == [
            "interrupted",
            "error",
            "ok",
        ]
        assert app.store.queries == [None]  # the empty search lists everything
        assert "documents.publish" in _static_text(app, "#history-source")
        assert "waiting for a decision on documents.publish()" in _static_text(
            app, "#history-summary"
        )
        await pilot.press("down", "down")  # from the search box to the list, then its next row
        await pilot.pause()
        summary = _static_text(app, "#history-summary")
        assert "RUN_UNKNOWN_MEMBER (line 1, column 23)" in summary
        assert "Did you mean crm.getAccount?" in summary


@pytest.mark.slow
async def test_history_search_filters_as_you_type(utc: None) -> None:
    app = HistoryApp()
    async with app.run_test(size=(120, 32)) as pilot:
        await _settle(app, pilot)
        await pilot.press(*"listorders")
        await _settle(app, pilot)
        table = app.screen.query_one("#history-runs", DataTable)
        assert table.row_count == 1
        assert app.store.queries[-1] == "listorders"
        assert "1 matching" in _static_text(app, "#history-count")
        assert "store.listOrders" in _static_text(app, "#history-source")
        assert '"total": 120' in _static_text(app, "#history-summary")

        await pilot.press(*"zzz")
        await _settle(app, pilot)
        assert table.row_count == 0
        assert "No runs match" in _static_text(app, "#history-source")

        app.screen.query_one("#history-search", Input).value = "run_unknown"
        await _settle(app, pilot)
        assert table.row_count == 1
        assert "getAcount" in _static_text(app, "#history-source")


async def test_history_enter_opens_the_source_in_the_editor(utc: None) -> None:
    posted: list[Message] = []
    app = HistoryApp()
    async with app.run_test(size=(120, 32), message_hook=posted.append) as pilot:
        await _settle(app, pilot)
        await pilot.press(*"orders", "enter")
        await pilot.pause()
        assert app.answers == [OpenSource(OK_SOURCE, "history-run-ok-0.ts")]
        assert not isinstance(app.screen, HistoryScreen)  # it closed


async def test_history_o_on_the_table_opens_and_r_shows_the_result(utc: None) -> None:
    posted: list[Message] = []
    app = HistoryApp()
    async with app.run_test(size=(120, 32), message_hook=posted.append) as pilot:
        await _settle(app, pilot)
        await pilot.press("tab", "down", "o")  # to the table, second row: the failed run
        await pilot.pause()
        assert [a.source for a in app.answers] == [ERROR_SOURCE]

        app.push_screen(HistoryScreen(app.store), app.answers.append)
        await _settle(app, pilot)
        await pilot.press("tab", "down", "down", "r")
        await pilot.pause()
        shown = app.answers[1]
        assert isinstance(shown, ShowStored)
        assert shown.envelope["value"][0] == {"id": "ord_1", "total": 120}
        assert not isinstance(app.screen, HistoryScreen)


async def test_history_search_then_down_reaches_the_list_and_its_keys(utc: None) -> None:
    """Type a search, Down, then the hinted key: it acts on the run on screen, and no
    letter meant for the list ends up in the search."""
    app = HistoryApp()
    async with app.run_test(size=(120, 32)) as pilot:
        await _settle(app, pilot)
        screen = app.screen
        search = screen.query_one("#history-search", Input)
        table = screen.query_one("#history-runs", DataTable)
        hint = _static_text(app, "#history-hint")
        assert search.has_focus
        assert "r show result" not in hint and "↓" in hint  # only keys that work here
        await pilot.press(*"getacount")
        await _settle(app, pilot)
        await pilot.press("down")
        await pilot.pause()
        assert table.has_focus and table.cursor_row == 0  # the match on screen, not the next
        assert "r show result" in _static_text(app, "#history-hint")
        await pilot.press("r")
        await pilot.pause()
        assert search.value == "getacount"
        assert [a.source for a in app.answers] == [ERROR_SOURCE]
        assert isinstance(app.answers[0], ShowStored)


async def test_history_list_sends_typing_to_the_search_and_up_goes_back(utc: None) -> None:
    app = HistoryApp()
    async with app.run_test(size=(120, 32)) as pilot:
        await _settle(app, pilot)
        screen = app.screen
        search = screen.query_one("#history-search", Input)
        table = screen.query_one("#history-runs", DataTable)
        await pilot.press("down", "down")  # to the list, then its second row
        assert table.has_focus and table.cursor_row == 1
        await pilot.press("up", "up")  # the first row, then back to the search
        assert search.has_focus
        await pilot.press("down", *"pub")  # letters that are no key of the list: a search
        await _settle(app, pilot)
        assert search.has_focus and search.value == "pub"
        assert table.row_count == 1 and app.answers == []


async def test_history_escape_closes_and_an_empty_history_says_so(utc: None) -> None:
    posted: list[Message] = []
    app = HistoryApp(HistoryStore([]))
    async with app.run_test(message_hook=posted.append) as pilot:
        await _settle(app, pilot)
        assert "No runs yet." in _static_text(app, "#history-source")
        search = app.screen.query_one("#history-search", Input)
        await pilot.press("tab", "slash")  # from the table, / goes back to the search box
        assert search.has_focus and search.value == ""
        await pilot.press("slash")  # in the search box, / is just a character
        assert search.value == "/"
        await pilot.press("enter")  # nothing to open: nothing posted, still open
        await pilot.pause()
        assert isinstance(app.screen, HistoryScreen)
        await pilot.press("escape")
        await pilot.pause()
        assert not isinstance(app.screen, HistoryScreen)
    assert app.answers == [None]  # closed, choosing nothing


def test_result_summary_and_durations() -> None:
    long_value = {"status": "ok", "value": list(range(40)), "duration_ms": 1234.0}
    text = result_summary(long_value)
    assert text.startswith("status: ok in 1.23 s")
    assert "more lines (r shows it all)" in text
    assert result_summary({"status": "ok", "value_kind": "undefined", "value": None}).endswith(
        "value: undefined"
    )
    windowed = {
        "status": "ok",
        "value_window": {"path": "$.rows", "items": [{"a": 1}]},
        "shown": 1,
        "total": 500,
    }
    assert "value: 1 of 500 items at $.rows" in result_summary(windowed)


@pytest.mark.slow
@pytest.mark.parametrize("theme", ["run-repl-light", "ansi-dark", "textual-light"])
async def test_screens_follow_any_theme(utc: None, theme: str) -> None:
    app = HistoryApp()
    async with app.run_test(size=(120, 32)) as pilot:
        await _settle(app, pilot)
        app.theme = theme  # ANSI colour names and themes without syntax colours too
        await pilot.pause()
        assert "documents.publish" in _static_text(app, "#history-source")
        app.push_screen(CallDetailScreen(_approved_call()))
        await pilot.pause()
        assert "approved by a person" in _static_text(app, "#call-detail-facts")
        app.theme = "run-repl-midnight"
        await pilot.pause()
        assert '"published": true' in _static_text(app, "#call-detail-result")


# ------------------------------------------------------------------ call detail


async def test_call_detail_shows_pretty_args_error_and_traceback() -> None:
    app = CallDetailApp(_failed_call())
    async with app.run_test(size=(100, 40)) as pilot:
        await pilot.pause()
        assert "#3  billing.listInvoices" in _static_text(app, "#call-detail-title")
        facts = _static_text(app, "#call-detail-facts")
        assert "status     RUN_HOST_FUNCTION_ERROR" in facts
        assert "12.5 ms" in facts and "4.2 ms into the run" in facts
        assert "approval wait" not in facts  # this call needed no approval
        args = _static_text(app, "#call-detail-args")
        assert '"customerId": "cus_1",' in args  # pretty: one key a line
        assert "KeyError: 'cus_1'" in _static_text(app, "#call-detail-error")
        traceback = _static_text(app, "#call-detail-traceback")
        assert "return INVOICES[customer_id]" in traceback
        assert not app.screen.query("#call-detail-result")


async def test_call_detail_shows_result_wait_and_decision_and_y_copies() -> None:
    app = CallDetailApp(_approved_call())
    async with app.run_test(size=(100, 40)) as pilot:
        await pilot.pause()
        facts = _static_text(app, "#call-detail-facts")
        assert "approved by a person" in facts
        assert "8.40 s (not part of the call time)" in facts
        assert "3.0 ms" in facts
        result = _static_text(app, "#call-detail-result")
        assert '"published": true,' in result
        await pilot.press("y")
        await pilot.pause()
        assert app.clipboard == call_detail_text(app.call)
        assert '"url": "https://example.test/d/7"' in app.clipboard
        assert "approval wait" in app.clipboard
        await pilot.press("escape")
        await pilot.pause()
        assert not isinstance(app.screen, CallDetailScreen)


def test_payloads_are_decoded_and_a_cut_one_says_so() -> None:
    tagged = '[{"\\u0000":"d","v":1700000000000},{"a":[1,{"\\u0000":"u"}]}]'
    assert plain_lines(payload_lines(tagged)) == "\n".join(
        [
            "[",
            "  Date 2023-11-14T22:13:20.000Z,",
            "  {",
            '    "a": [',
            "      1,",
            "      undefined",
            "    ]",
            "  }",
            "]",
        ]
    )
    cut = plain_lines(payload_lines('[{"cut": "in the mid'))
    assert cut.splitlines() == [
        "(kept only the first 20 characters: not decoded)",
        '[{"cut": "in the mid',
    ]
    assert payload_lines(None) == []


# ------------------------------------------------------------------ help


async def test_help_shows_focused_help_and_grouped_bindings() -> None:
    app = HelpApp(FOCUSED_HELP)
    async with app.run_test(size=(110, 40)) as pilot:
        await pilot.pause()
        markdown = app.screen.query_one("#help-focused", Markdown)
        assert "the last expression is the result" in markdown.source
        tables = "\n".join(_plain(s.content) for s in app.screen.query(".help-group"))
        for keys, description, binding_id in BINDINGS:
            assert keys in tables and description in tables
            if binding_id:
                assert binding_id in tables
        assert tables.index("Editor") < tables.index("App") < tables.index("General")
        assert "Fixed keys" in tables
        note = _static_text(app, "#help-keymap-note")
        assert "[keymap]" in note and 'editor.run = "ctrl+r"' in note
        assert "config.toml" in note
        await pilot.press("escape")
        await pilot.pause()
        assert not isinstance(app.screen, HelpScreen)


async def test_help_without_widget_help_still_lists_keys() -> None:
    app = HelpApp(None)
    async with app.run_test() as pilot:
        await pilot.pause()
        assert "no help of its own" in app.screen.query_one("#help-focused", Markdown).source


def test_group_bindings_dedupes_and_keeps_order() -> None:
    groups = group_bindings([*BINDINGS, BINDINGS[0]])
    assert [g for g, _ in groups] == ["editor", "app", "general", "fixed"]
    assert groups[0][1] == BINDINGS[:2]


# ------------------------------------------------------------------ snapshots


def test_history_snapshot(snap_compare: Any, utc: None) -> None:
    async def settle(pilot: Any) -> None:
        pilot.app.screen.query_one("#history-search", Input).cursor_blink = False
        await _settle(pilot.app, pilot)

    assert snap_compare(HistoryApp(), terminal_size=(120, 30), run_before=settle)


def test_call_detail_snapshot(snap_compare: Any) -> None:
    assert snap_compare(CallDetailApp(_failed_call()), terminal_size=(100, 34))


def _invoices_call() -> CallRecord:
    return CallRecord(
        seq=4,
        path="billing.listInvoices",
        args_preview='("acc_0001")',
        ok=True,
        duration_ms=343.2,
        decision="approved",
        wait_ms=7100.0,
        started_at_ms=12.5,
        args_text='["acc_0001"]',
        result_text=(
            '[{"id":"inv_0895","amount":4088.74,"status":"paid",'
            '"issued_at":{"\\u0000":"d","v":1746435600000},'
            '"due_date":{"\\u0000":"d","v":1748995200000}}]'
        ),
    )


def test_call_detail_decoded_snapshot(snap_compare: Any) -> None:
    """The result decoded: dates as dates, never the wire's tags; the wait apart."""
    assert snap_compare(CallDetailApp(_invoices_call()), terminal_size=(100, 34))
