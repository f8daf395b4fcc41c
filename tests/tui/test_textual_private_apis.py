"""Fences around the private parts of Textual the IDE and its tests lean on.

`run_repl/tui/components/editor/editor.py` replaces the private
`SyntaxAwareDocument.prepare_query` for the whole process (one compiled highlight
query shared by every TypeScript document) and reads Textual's bundled
`javascript.scm` by path; `run_repl/tui/components/key_footer.py` sets the private
`FooterKey`'s `compact` before mounting it; the IDE tests (`tests/tui/conftest.py`) skip
a headless screen's painting in the private `Screen._compositor_refresh`, and
`screen_text` sets the private `visible_screen_stack` as Textual's updates do. None is
Textual's public API, and `pyproject.toml` pins the Textual versions these tests
passed on: when a release moves one, these fail with what to look at, instead of
highlighting going off or the tests' screens going blank quietly.
"""

from __future__ import annotations

import inspect
from pathlib import Path

import pytest
import textual

from run_repl.tui.components.editor import editor


def test_textual_still_prepares_highlight_queries_through_the_patched_method() -> None:
    from textual.document._document import Document
    from textual.document._syntax_aware_document import SyntaxAwareDocument

    params = list(inspect.signature(Document.prepare_query).parameters)
    assert params == ["self", "query"], (
        f"Textual's Document.prepare_query now takes {params}: update "
        "_share_compiled_query in run_repl/tui/components/editor/editor.py"
    )
    assert editor.typescript_language() is not None
    assert SyntaxAwareDocument.prepare_query.__module__ == editor.__name__, (
        "SyntaxAwareDocument.prepare_query is not run-repl's shared-query patch"
    )
    first, second = editor.CodeEditor("const a = 1"), editor.CodeEditor("let b = [2]")
    query = getattr(first, "_highlight_query", None)
    assert query is not None, "Textual's TextArea no longer keeps its highlight query"
    assert getattr(second, "_highlight_query", None) is query, (
        "two TypeScript editors compiled the highlight query twice: Textual no longer "
        "calls SyntaxAwareDocument.prepare_query (see _share_compiled_query)"
    )


def test_the_bundled_javascript_highlights_are_where_the_editor_reads_them() -> None:
    path = Path(textual.__file__).parent / "tree-sitter" / "highlights" / "javascript.scm"
    assert path.is_file(), (
        f"Textual no longer ships {path}: typescript_language() in "
        "run_repl/tui/components/editor/editor.py turns highlighting off without it"
    )
    assert "@keyword" in path.read_text()


def test_other_languages_compile_their_own_queries() -> None:
    import tree_sitter_typescript
    from textual.document._syntax_aware_document import SyntaxAwareDocument
    from tree_sitter import Language

    assert editor.typescript_language() is not None  # the patch is in place
    # Another Language object (the same grammar) stands for any other language.
    other = Language(tree_sitter_typescript.language_typescript())
    one, two = SyntaxAwareDocument("a", other), SyntaxAwareDocument("b", other)
    assert one.prepare_query("(identifier) @x") is not two.prepare_query("(identifier) @x")


def test_textual_footer_keys_still_start_compact_and_are_bound_to_the_footer() -> None:
    # run_repl/tui/components/key_footer.py sets each key's `compact` before it is
    # mounted (FooterKey lives in the private textual.widgets._footer).
    from textual.widgets import Footer
    from textual.widgets._footer import FooterKey

    assert "compact" in FooterKey._reactives and "compact" in Footer._reactives, (
        "Textual's FooterKey or Footer lost its `compact` reactive: update KeyFooter.compose "
        "in run_repl/tui/components/key_footer.py"
    )
    from textual.dom import DOMNode

    from run_repl.tui.components.key_footer import FOOTER_KEYS_START_COMPACT

    assert FooterKey.compact._default is FOOTER_KEYS_START_COMPACT, (
        "Textual's FooterKey.compact has another default: update FOOTER_KEYS_START_COMPACT"
    )
    assert "data_bind(compact=Footer.compact)" in inspect.getsource(Footer.compose), (
        "Textual's Footer no longer binds its keys' `compact` on mount: KeyFooter.compose "
        "may set it for nothing"
    )
    assert "self._reactive_connect[name]" in inspect.getsource(DOMNode.data_bind), (
        "Textual's data_bind no longer keeps its bindings in `_reactive_connect`: "
        "KeyFooter.compose tells the bound keys by it"
    )


def test_textual_still_paints_a_screens_updates_where_the_tests_skip_them() -> None:
    # tests/tui/conftest.py skips a headless screen's painting in
    # Screen._compositor_refresh and does the rest of what it does itself.
    from textual.screen import Screen

    source = inspect.getsource(Screen._compositor_refresh.__wrapped__)
    steps = ("render_update(", "self._dirty_widgets.clear()", "app._update_mouse_over(self)")
    for step in steps:
        assert step in source, (
            f"Textual's Screen._compositor_refresh no longer does {step!r}: update "
            "_compositor_refresh_unpainted in tests/tui/conftest.py"
        )
    assert "visible_screen_stack.get().pop()" in inspect.getsource(Screen.render), (
        "a modal screen no longer paints the screens beneath it from visible_screen_stack: "
        "update screen_text in tests/tui/tui_helpers.py"
    )


async def test_a_widget_that_fails_to_draw_its_last_frame_fails_the_test() -> None:
    from textual.app import App, ComposeResult
    from textual.widgets import Static

    class Broken(Exception):
        pass

    class Breaks(Static):
        broken = False

        def render(self) -> str:
            if self.broken:
                raise Broken
            return "fine"

    class Shows(App[None]):
        def compose(self) -> ComposeResult:
            yield Breaks()

    with pytest.raises(Broken):
        async with Shows().run_test() as pilot:
            await pilot.pause()
            widget = pilot.app.query_one(Breaks)
            widget.broken = True
            widget.refresh()
