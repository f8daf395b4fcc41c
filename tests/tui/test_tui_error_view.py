"""The error box's excerpt of the snippet: however narrow the panel, the source line
is one screen row and the caret under it points at the error's column."""

from __future__ import annotations

from typing import Any

import pytest
from textual.app import App, ComposeResult
from tui_helpers import screen_text, until

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


async def fitted_rows(pilot: Any, *, wider_than: int = 0) -> tuple[str, str]:
    """The excerpt's rows once the view has been laid out at its width: a view just
    shown is drawn first at no width, then again when its size comes (on_resize),
    a refresh later."""
    app = pilot.app

    def fitted() -> bool:
        try:
            code, caret = rows_of(app)
        except ValueError:  # not drawn yet, or its line still wrapped onto two rows
            return False
        return "^" in caret and len(code.rstrip()) > wider_than

    await until(pilot, fitted)
    return rows_of(app)


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
        code, caret = await fitted_rows(pilot)
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
        narrow, _ = await fitted_rows(pilot)
        view.styles.width = 76
        wide, caret = await fitted_rows(pilot, wider_than=len(narrow.rstrip()))
        assert wide[caret.index("^")] == SOURCE.split("\n")[4][59]
