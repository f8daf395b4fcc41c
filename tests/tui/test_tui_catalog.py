"""The host catalog (as harlequin's data catalog) and completion in the editor, both from
the manifest the sandbox checks calls against."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from tui_helpers import SIZE, jump, make_app, run_to_end, screen_text

from run_repl.tui.app import RunReplApp
from run_repl.tui.components.completion_menu import CompletionMenu, SignatureHint
from run_repl.tui.components.host_catalog import HostCatalog
from run_repl.tui.screens.function_doc import FunctionDocScreen


async def typed(pilot: Any, text: str, *, start: str = "") -> Any:
    editor = pilot.app.main.editor_tabs.active_editor
    editor.load_text(start)
    editor.move_cursor(editor.document.end)
    editor.focus()
    await pilot.press(*text)
    await pilot.pause()
    return editor


def offers(app: RunReplApp) -> list[str]:
    menu = app.query_one(CompletionMenu)
    return [c.path for c in menu.candidates] if menu.is_open else []


async def test_typing_a_namespace_offers_its_functions_and_tab_takes_one(
    app_and_pilot: tuple[RunReplApp, Any],
) -> None:
    app, pilot = app_and_pilot
    editor = await typed(pilot, "const a = await crm.")
    assert offers(app) == ["crm.getAccount", "crm.listAccounts"]
    await pilot.press("down", "tab")
    assert editor.text == "const a = await crm.listAccounts()"
    assert editor.cursor_location == (0, len("const a = await crm.listAccounts("))
    assert offers(app) == []
    hint = app.query_one(SignatureHint)
    assert hint.has_class("-open") and "crm.listAccounts(limit?)" in str(hint.content)
    await pilot.press(*"5")
    assert editor.text == "const a = await crm.listAccounts(5)"


async def test_a_namespace_taken_goes_on_to_its_members(
    app_and_pilot: tuple[RunReplApp, Any],
) -> None:
    app, pilot = app_and_pilot
    editor = await typed(pilot, "docu")
    assert offers(app) == ["documents"]
    await pilot.press("enter")
    assert editor.text == "documents."
    assert offers(app) == ["documents.listDrafts", "documents.publish"]
    assert app.query_one(CompletionMenu).candidates[1].needs_approval


@pytest.mark.slow
async def test_a_mistyped_name_is_offered_what_a_run_would_suggest(
    app_and_pilot: tuple[RunReplApp, Any],
) -> None:
    app, pilot = app_and_pilot
    editor = await typed(pilot, "await crm.getAcount")
    assert offers(app) == ["crm.getAccount"]
    assert app.query_one(CompletionMenu).candidates[0].close
    # The run says the same thing (its error's did_you_mean).
    editor.load_text("await crm.getAcount('acc_0001')")
    await run_to_end(pilot)
    assert app.main.runs.result.error.did_you_mean == ["crm.getAccount"]


async def test_escape_closes_and_keys_then_do_what_they_always_do(
    app_and_pilot: tuple[RunReplApp, Any],
) -> None:
    app, pilot = app_and_pilot
    editor = await typed(pilot, "crm.")
    assert offers(app)
    await pilot.press("escape")
    assert offers(app) == []
    await pilot.press("enter", "tab")
    assert editor.text == "crm.\n  "  # a new line, then an indent: nothing was taken


async def test_strings_and_comments_offer_nothing(app_and_pilot: tuple[RunReplApp, Any]) -> None:
    app, pilot = app_and_pilot
    await typed(pilot, "const s = 'crm.")
    assert offers(app) == []
    await typed(pilot, "// see crm.")
    assert offers(app) == []
    await typed(pilot, "x")  # one letter is not a word to complete yet
    assert offers(app) == []
    await pilot.press("ctrl+space")  # ... unless asked
    assert offers(app) == []  # nothing starts with x
    await typed(pilot, "")
    await pilot.press("ctrl+space")
    assert offers(app) == ["billing", "crm", "documents", "orders", "store"]


@pytest.mark.slow
async def test_the_argument_being_typed_is_bold_in_the_hint(
    app_and_pilot: tuple[RunReplApp, Any],
) -> None:
    app, pilot = app_and_pilot
    await typed(pilot, "await store.listOrders('acc_0001', ")
    hint = app.query_one(SignatureHint)
    text = hint.content
    assert "store.listOrders(customerId, status?)" in str(text)
    bold = [str(text)[s.start : s.end] for s in text.spans if "bold" in str(s.style)]
    assert "status?" in bold and "customerId" not in bold
    await pilot.press(*"'paid')")
    assert not hint.has_class("-open")  # the call is closed


async def test_f9_shows_the_doc_of_the_function_at_the_cursor(
    app_and_pilot: tuple[RunReplApp, Any],
) -> None:
    app, pilot = app_and_pilot
    editor = await typed(pilot, "", start="await documents.publish(id)")
    editor.move_cursor((0, 10))  # on the name
    await pilot.press("f9")
    await pilot.pause()
    assert isinstance(app.screen, FunctionDocScreen)
    text = screen_text(app)
    assert "documents.publish(draftId)" in text and "needs approval" in text
    assert "Publish a draft (asks a person first)." in text
    await pilot.press("escape")
    editor.move_cursor((0, 0))
    await pilot.press("f9")
    await pilot.pause()
    assert not isinstance(app.screen, FunctionDocScreen)
    assert any("No host function at the cursor" in n.message for n in app._notifications)


# ---------------------------------------------------------------- the catalog
async def test_the_catalog_lists_namespaces_functions_and_approval_badges(
    app_and_pilot: tuple[RunReplApp, Any],
) -> None:
    app, _pilot = app_and_pilot
    catalog = app.query_one(HostCatalog)
    assert catalog.display and catalog.border_title == "Host: demo"
    tree = catalog.tree
    namespaces = [str(n.label) for n in tree.root.children]
    assert namespaces == ["crm", "store", "billing", "documents", "orders"]
    documents = tree.root.children[3]
    labels = [str(n.label) for n in documents.children]
    assert labels == ["listDrafts()", "publish(draftId) ⚑"]


async def test_enter_on_a_function_inserts_a_call_at_the_cursor(
    app_and_pilot: tuple[RunReplApp, Any],
) -> None:
    app, pilot = app_and_pilot
    editor = await typed(pilot, "", start="const drafts = \n")
    editor.move_cursor((0, len("const drafts = ")))
    await jump(pilot, "h")
    tree = app.query_one(HostCatalog).tree
    assert app.focused is tree
    documents = tree.root.children[3]
    tree.move_cursor(documents.children[0])
    await pilot.pause()
    doc = str(app.query_one("#catalog-doc").content)
    assert "documents.listDrafts()" in doc and "Document drafts" in doc
    await pilot.press("enter")
    await pilot.pause()
    assert editor.text == "const drafts = await documents.listDrafts()\n"
    assert app.focused is editor
    assert editor.cursor_location == (0, len("const drafts = await documents.listDrafts("))


@pytest.mark.slow
async def test_ctrl_b_hides_and_shows_the_catalog(app_and_pilot: tuple[RunReplApp, Any]) -> None:
    app, pilot = app_and_pilot
    catalog = app.query_one(HostCatalog)
    await jump(pilot, "h")
    assert app.main.panel_of(app.focused) == "catalog"
    await pilot.press("ctrl+b")
    await pilot.pause()
    assert not catalog.display and app.focused is app.main.editor_tabs.active_editor
    for _ in range(5):  # F4 skips a hidden catalog
        await pilot.press("f4")
        assert app.main.panel_of(app.focused) != "catalog"
    await pilot.press("ctrl+b")
    await pilot.pause()
    assert catalog.display


async def test_a_narrow_screen_starts_with_the_catalog_hidden(data_dir: Path) -> None:
    app = make_app(data_dir)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        assert not app.query_one(HostCatalog).display
        await pilot.press("ctrl+b")
        await pilot.pause()
        assert app.query_one(HostCatalog).display
    app = make_app(data_dir)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        assert app.query_one(HostCatalog).display


async def test_typing_the_closing_paren_a_completion_inserted_steps_over_it(
    app_and_pilot: tuple[RunReplApp, Any],
) -> None:
    """The report's steps: accept `crm.listAccounts`, type `3)`: one paren, cursor after it."""
    _app, pilot = app_and_pilot
    editor = await typed(pilot, "await crm.listAcc")
    await pilot.press("enter", "3", ")")
    assert editor.text == "await crm.listAccounts(3)"
    assert editor.cursor_location == (0, len("await crm.listAccounts(3)"))
    await pilot.press(")")  # the editor's paren is used up: this one is the person's
    assert editor.text == "await crm.listAccounts(3))"


async def test_a_paren_the_person_typed_is_never_stepped_over(
    app_and_pilot: tuple[RunReplApp, Any],
) -> None:
    _app, pilot = app_and_pilot
    editor = await typed(pilot, "f(1)", start="")
    editor.move_cursor((0, 3))  # before the person's own `)`
    await pilot.press(")")
    assert editor.text == "f(1))"


async def test_leaving_the_call_forgets_the_inserted_paren(
    app_and_pilot: tuple[RunReplApp, Any],
) -> None:
    _app, pilot = app_and_pilot
    editor = await typed(pilot, "await crm.listAcc", start="x\n")
    await pilot.press("enter")  # await crm.listAccounts(|)
    row = editor.cursor_location[0]
    await pilot.press("up", "down")
    editor.move_cursor((row, len("await crm.listAccounts(")))
    await pilot.press(")")
    assert editor.document.get_line(row) == "await crm.listAccounts())"


async def test_the_parameter_hint_stays_inside_the_editor(
    app_and_pilot: tuple[RunReplApp, Any],
) -> None:
    """On the editor's first line the row above is the tab strip: the hint goes below the
    line instead, and a long one is cut at the editor's right edge, not the screen's."""
    app, pilot = app_and_pilot
    editor = await typed(pilot, "await billing.listInvoices(")
    await pilot.pause()
    hint = app.query_one(SignatureHint)
    assert hint.has_class("-open")
    area = editor.content_region
    assert area.contains_region(hint.region), (hint.region, area)
    assert hint.region.y != editor.cursor_screen_offset.y  # never over the line typed in
    assert "billing.listInvoices(" in str(hint.render())
    # Further down there is room above the line: it goes there.
    editor = await typed(pilot, "await billing.listInvoices(", start="\n\n\n")
    await pilot.pause()
    assert hint.region.y == editor.cursor_screen_offset.y - 1
    assert area.contains_region(hint.region)


async def test_ctrl_home_and_ctrl_end_go_to_the_ends_of_a_long_buffer(
    app_and_pilot: tuple[RunReplApp, Any],
) -> None:
    app, pilot = app_and_pilot
    editor = app.main.editor_tabs.active_editor
    editor.load_text("\n".join(f"const x{n} = {n}" for n in range(5000)))
    editor.move_cursor((10, 3))
    editor.focus()
    await pilot.press("ctrl+end")
    await pilot.pause()
    assert editor.cursor_location == (4999, len("const x4999 = 4999"))
    assert editor.scroll_y > 4000  # the end is on screen
    assert editor.content_region.contains(*editor.cursor_screen_offset)
    await pilot.press("ctrl+shift+home")  # selects back to the start
    await pilot.pause()
    assert editor.selection.start == (4999, len("const x4999 = 4999"))
    assert editor.selection.end == (0, 0) and editor.scroll_y == 0
    await pilot.press("ctrl+end", "ctrl+home")
    assert editor.cursor_location == (0, 0) and not editor.selected_text
