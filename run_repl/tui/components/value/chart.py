"""A chart of the value panel's page: bars of a numeric column (an amount per order,
counts per status), drawn by plotext through textual-plotext's widget.

The chart shows the page the table shows (the window's first items, then a
hundred at a time: n/p page it), so a million items never load at once. What
it can chart is decided here, without an app (`chart_of`): numbers, records
with a numeric column (the column is chosen from the header's numeric ones:
←/→ cycles), or an object's numeric entries (`{"paid": 3, "open": 5}`).
Labels come from the first text column, else the item numbers. Anything else
gets a sentence saying why it cannot be charted, never an empty plot.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from textual.app import ComposeResult, RenderResult
from textual.containers import Vertical
from textual.content import Content
from textual.widgets import Static
from textual_plotext import PlotextPlot

from ...guest_text import safe_text
from .model import Shown
from .table import cell_text, records_of

VALUE = "value"
"""The column name of a page of plain numbers, or an object's numeric values."""
LYING_BARS = 16
"""At most this many labelled bars lie down, each label read whole down the side."""
LABEL_CHARS = 16  # a longer label is cut on the axis (the table shows it whole)


@dataclass(frozen=True)
class Chart:
    """What can be charted of a page: its numeric columns, their values, the labels."""

    columns: list[str]
    """The numeric columns, in the header's order."""
    values: dict[str, list[float | None]]
    """Each numeric column's values, one per item (None: missing, null or not a number)."""
    labels: list[str]
    """One label per item: the label column's text, else the item's number."""
    label_column: str | None
    """Where the labels come from (None: the item numbers)."""

    def points(self, column: str) -> tuple[list[str], list[float]]:
        """The (label, value) pairs of `column` that have a number."""
        pairs = [
            (lab, v)
            for lab, v in zip(self.labels, self.values[column], strict=True)
            if v is not None
        ]
        return [lab for lab, _ in pairs], [v for _, v in pairs]


_TEXT = "Nothing to chart: the value is text (lines), not numbers."


@dataclass(frozen=True)
class NotChartable:
    """Why a page cannot be charted, as the panel says it."""

    reason: str


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value)


def _is_number(value: Any) -> bool:
    return _number(value) is not None


def _chart_rows(
    rows: Sequence[dict[str, Any]],
    columns: Sequence[str],
    numbers: Sequence[int],
    keys: list[str] | None,
) -> Chart | NotChartable:
    """Rows (records) as a chart: a column is numeric when every value it has is a number."""
    numeric = [
        c
        for c in columns
        if any(_is_number(r.get(c)) for r in rows)
        and all(r.get(c) is None or _is_number(r.get(c)) for r in rows)
    ]
    if not numeric:
        shown = ", ".join(columns[:6]) + (", …" if len(columns) > 6 else "")
        return NotChartable(
            f"Nothing to chart: no column of these records holds numbers (columns: {shown})."
        )
    label_column: str | None = None
    if keys is not None:
        labels = keys
    else:
        texts = [
            c for c in columns if c not in numeric and all(isinstance(r.get(c), str) for r in rows)
        ]
        label_column = texts[0] if texts else None
        labels = (
            [str(r[label_column]) for r in rows]
            if label_column is not None
            else [str(n) for n in numbers]
        )
    values = {c: [_number(r.get(c)) for r in rows] for c in numeric}
    return Chart(numeric, values, [cell_text(lab, LABEL_CHARS) for lab in labels], label_column)


def chart_of(shown: Shown | None, items: Sequence[Any], offset: int) -> Chart | NotChartable:
    """What of the page (`items`, the first numbered `offset` + 1) can be charted, or why not."""
    if shown is None:
        return NotChartable("No value to chart.")
    numbers = [offset + n + 1 for n in range(len(items))]
    records = records_of(shown, items, offset)
    if records is not None:
        first = records.first + 1
        return _chart_rows(
            records.rows, records.columns, range(first, first + len(records.rows)), None
        )
    if shown.inline:
        value = shown.value
        if isinstance(value, list):
            items, numbers = value, list(range(1, len(value) + 1))
        elif isinstance(value, dict) and value:
            items = [{"key": k, "value": v} for k, v in value.items()]
            return _entries(items)
        elif isinstance(value, str) and "\n" in value:
            return NotChartable(_TEXT)
        else:
            return NotChartable(
                f"Nothing to chart: the value is one {shown.kind or 'value'}, not numbers "
                "or records with a numeric column."
            )
    elif shown.path == "$entries":
        return _entries(items)
    elif shown.path == "$lines":
        return NotChartable(_TEXT)
    if items and all(_is_number(i) or i is None for i in items) and any(map(_is_number, items)):
        return Chart([VALUE], {VALUE: [_number(i) for i in items]}, [str(n) for n in numbers], None)
    return NotChartable(
        "Nothing to chart: these items are not all numbers, nor records with a numeric "
        "column (an array of objects with mostly the same keys)."
    )


def _entries(items: Sequence[Any]) -> Chart | NotChartable:
    """An object's entries: numbers by key, or objects (records) by key."""
    keys = [str(i.get("key")) for i in items if isinstance(i, dict)]
    values = [i.get("value") for i in items if isinstance(i, dict)]
    if values and all(_is_number(v) or v is None for v in values) and any(map(_is_number, values)):
        return Chart(
            [VALUE],
            {VALUE: [_number(v) for v in values]},
            [cell_text(k, LABEL_CHARS) for k in keys],
            "key",
        )
    records = [v for v in values if isinstance(v, dict)]
    if values and len(records) == len(values):
        columns: dict[str, None] = {}
        for record in records:
            columns.update(dict.fromkeys(record))
        chart = _chart_rows(records, list(columns), range(1, len(records) + 1), keys)
        if isinstance(chart, Chart):
            return Chart(chart.columns, chart.values, chart.labels, "key")
        return chart
    return NotChartable(
        "Nothing to chart: the object's values are not numbers, nor objects with a numeric field."
    )


class ChartPlot(PlotextPlot):
    """The plot, drawn for the width it has: bars lying down when few labelled items fit
    down the side, bars standing when each gets a column or two, else a line; the
    labels under it are spread evenly (plotext's own pick depends on the sizes it was
    drawn at before, so the same page would not always look the same)."""

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.labels: list[str] = []
        self.values: list[float] = []
        self.labelled = False
        self.kind = ""
        """How the last drawing went: "lying", "bars" or "line"."""

    def show(self, labels: list[str], values: list[float], *, labelled: bool) -> None:
        self.labels, self.values, self.labelled = labels, values, labelled
        self.refresh()

    def render(self) -> RenderResult:
        plt, labels, values = self.plt, self.labels, self.values
        plt.clear_figure()
        count = len(values)
        if self.labelled and count <= LYING_BARS:
            # plotext lays the first bar at the bottom: the first item goes on top
            self.kind = "lying"
            plt.bar(labels[::-1], values[::-1], orientation="horizontal", width=0.6)
        elif count:
            self.kind = "bars" if count * 2 <= self.size.width - 8 else "line"
            if self.kind == "bars":
                plt.bar(labels, values, width=0.8)
            else:
                plt.plot(list(range(1, count + 1)), values, marker="braille")
            wide = max(len(label) for label in labels) + 2
            fit = max(1, (self.size.width - 8) // wide)
            ticks = range(1, count + 1, max(1, -(-count // fit)))
            plt.xticks([float(t) for t in ticks], [labels[t - 1] for t in ticks])
        return super().render()


class ValueChart(Vertical):
    """The page as bars of one numeric column, or the sentence saying why it cannot be."""

    DEFAULT_CSS = """
    ValueChart {
        height: 1fr;
        background: $surface;
        #chart-title { height: 1; padding: 0 1; color: $text-muted; text-wrap: nowrap; text-overflow: ellipsis; }
        #chart-reason { display: none; height: auto; padding: 1 2; color: $text-warning; }
        &.-not-chartable #chart-reason { display: block; }
        PlotextPlot { height: 1fr; }
        &.-not-chartable PlotextPlot { display: none; }
        &.-not-chartable #chart-title { display: none; }
    }
    """

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self._title = Static(id="chart-title", markup=False)
        self._reason = Static(id="chart-reason", markup=False)
        self._plot = ChartPlot(id="chart-plot")
        self.chart: Chart | NotChartable = NotChartable("No value to chart.")
        self.column: str | None = None
        """The numeric column drawn (kept by name across pages and values)."""
        self.span = ""
        self.drawn: tuple[list[str], list[float]] = ([], [])
        """The bars drawn: their labels and values."""
        self.cycle_keys = "left/right"

    def compose(self) -> ComposeResult:
        yield self._title
        yield self._plot
        yield self._reason

    @property
    def columns(self) -> list[str]:
        """The numeric columns a chart can be drawn of (none when it cannot be charted)."""
        return self.chart.columns if isinstance(self.chart, Chart) else []

    @property
    def reason(self) -> str | None:
        """Why the page cannot be charted (None: it is charted)."""
        return self.chart.reason if isinstance(self.chart, NotChartable) else None

    def show_page(
        self,
        shown: Shown | None,
        items: Sequence[Any],
        offset: int,
        span: str,
        prefer: str | None = None,
    ) -> None:
        """Chart the page (`span` says which items it is: "items 1–66 of 2,000"); `prefer`
        is a column to start on (the table's cursor column) when no column is chosen yet."""
        self.chart, self.span = chart_of(shown, items, offset), span
        if isinstance(self.chart, Chart) and self.column not in self.chart.columns:
            self.column = prefer if prefer in self.chart.columns else self.chart.columns[0]
        self._draw()

    def cycle(self, step: int) -> bool:
        """The next (step 1) or previous (-1) numeric column; False when there is no other."""
        chart = self.chart
        if not isinstance(chart, Chart) or len(chart.columns) < 2:
            return False
        index = chart.columns.index(self.column) if self.column in chart.columns else 0
        self.column = chart.columns[(index + step) % len(chart.columns)]
        self._draw()
        return True

    def _draw(self) -> None:
        chart = self.chart
        self.set_class(isinstance(chart, NotChartable), "-not-chartable")
        if isinstance(chart, NotChartable):
            self._reason.update(chart.reason)
            return
        self._reason.update("")
        assert self.column is not None
        column = self.column
        labels, values = chart.points(column)
        by = chart.label_column or "item"
        parts: list[str | tuple[str, str]] = [
            (safe_text(column), "$text-accent"),
            f" by {safe_text(by)}",
        ]
        if len(chart.columns) > 1:
            index = chart.columns.index(column) + 1
            parts.append(f" · column {index} of {len(chart.columns)} ({self.cycle_keys})")
        # Which items: the header above says it too, but a narrow panel cuts this line first.
        parts.append(f" · {self.span}")
        missing = len(chart.labels) - len(values)
        if missing:
            parts.append(f" · {missing:,} without a number")
        self._title.update(Content.assemble(*parts))
        self.drawn = ([], [])
        if not values:
            self.set_class(True, "-not-chartable")
            self._reason.update(f"Nothing to chart: no item on this page has a number in {column}.")
            return
        self.drawn = (labels, values)
        texts = [safe_text(lab) for lab in labels]
        self._plot.show(texts, values, labelled=chart.label_column is not None)
