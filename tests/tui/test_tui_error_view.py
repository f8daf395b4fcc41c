"""The error box's excerpt of the snippet: however narrow the panel, the source line
is one screen row and the caret under it points at the error's column."""

from __future__ import annotations

from typing import Any

import pytest
from textual.app import App, ComposeResult
from tui_helpers import screen_text

from run_repl.sandbox.result import RunErrorInfo
from run_repl.tui.components.error_view import RunErrorView

SOURCE = (
    "const drafts = await documents.listDrafts()\n"
    "const todo = drafts.filter((d) => !d.published)\n"
    "// publish the first one that is left, and say which one it was to the person\n"
    "\n"
    "return await documents.publish(todo[0].id, { notify: true, channel: 'email' })\n"
)


class ErrorApp(App[None]):
    CSS = "RunErrorView { width: 44; }"

    def compose(self) -> ComposeResult:
        yield RunErrorView(id="error")


def rows_of(app: App[Any]) -> tuple[str, str]:
    """The screen rows of the excerpt: the source line's and the caret's."""
    rows = screen_text(app).splitlines()
    (at,) = [i for i, row in enumerate(rows) if "5 | " in row]
    return rows[at], rows[at + 1]


@pytest.mark.parametrize("column", [1, 14, 32, 60, 78, 81])
async def test_the_caret_points_at_the_column_when_the_panel_is_narrow(column: int) -> None:
    app = ErrorApp()
    async with app.run_test(size=(80, 24)) as pilot:
        view = app.query_one(RunErrorView)
        error = RunErrorInfo(
            code="RUN_APPROVAL_DENIED",
            message="documents.publish() was not approved.",
            line=5,
            column=column,
        )
        view.show_error(error, SOURCE)
        await pilot.pause()
        code, caret = rows_of(app)
        assert caret.count("^") == 1, (code, caret)
        x = caret.index("^")
        line = SOURCE.split("\n")[4]
        if column <= len(line):
            assert code[x] == line[column - 1], (code, caret)
            # The characters around it are the snippet's own, so it reads in place.
            left = code[: x + 1].split("| ", 1)[1].lstrip("…")
            assert line[:column].endswith(left), (code, caret)
        else:  # just past the end of the line
            assert code[:x].rstrip().endswith(line[-3:]), (code, caret)


async def test_the_excerpt_follows_the_panel_when_it_is_resized() -> None:
    app = ErrorApp()
    async with app.run_test(size=(80, 24)) as pilot:
        view = app.query_one(RunErrorView)
        view.show_error(
            RunErrorInfo(code="RUN_EXCEPTION", message="boom", line=5, column=60), SOURCE
        )
        await pilot.pause()
        narrow, _ = rows_of(app)
        view.styles.width = 76
        await pilot.pause()
        wide, caret = rows_of(app)
        assert len(wide.rstrip()) > len(narrow.rstrip())
        assert wide[caret.index("^")] == SOURCE.split("\n")[4][59]
