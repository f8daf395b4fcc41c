"""The current value of the line REPL, paged by item: `:more`, `:page N`, `:item N`.

A windowed result shows its first page; the rest stays in the store under
`value_ref`, and `runner.expand(ref, offset, limit)` gives any slice of it.
Pages are as many items as the first window showed, so page 1 is exactly what
the run printed and `:more` continues with no gap and no overlap.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Protocol

from ..result_text import Painter, pretty
from ..safe_text import clean
from ..sandbox.result import RunResult
from ..sandbox.result_store import Page

MAX_PAGE = 1000  # runner.expand's largest limit


class Expander(Protocol):
    def expand(self, ref: str, offset: int = 0, limit: int = 100) -> Page: ...


@dataclass
class ValuePager:
    ref: str
    total: int
    page_size: int
    path: str
    next_offset: int  # the first item not printed yet

    @classmethod
    def of(cls, result: RunResult) -> ValuePager | None:
        if result.status != "ok" or not result.value_ref or result.total is None:
            return None
        shown = result.shown if result.shown is not None else result.total
        path = result.value_window.path if result.value_window is not None else "$"
        return cls(result.value_ref, result.total, min(max(shown, 1), MAX_PAGE), path, shown)

    @property
    def has_more(self) -> bool:
        return self.next_offset < self.total

    @property
    def pages(self) -> int:
        return max(1, -(-self.total // self.page_size))

    def hint(self, paint: Painter) -> str:
        rest = self.total - self.next_offset
        return paint(
            f"… {rest:,} more: :more or Ctrl-N for the next page, :page N (of {self.pages}), :item N",
            "dim",
        )

    def more(self, runner: Expander, paint: Painter) -> list[str]:
        if not self.has_more:
            items = f"{self.total:,} item{'s' * (self.total != 1)}"
            return [
                paint(f"that was all of it: {items} (:page N or :item N shows one again)", "dim")
            ]
        return self._show(runner, self.next_offset, paint)

    def page(self, runner: Expander, number: int, paint: Painter) -> list[str]:
        if not 1 <= number <= self.pages:
            return [
                paint(f"no page {number}: pages 1–{self.pages} of {self.page_size} items", "yellow")
            ]
        return self._show(runner, (number - 1) * self.page_size, paint)

    def item(self, runner: Expander, number: int, paint: Painter) -> list[str]:
        if not 1 <= number <= self.total:
            return [paint(f"no item {number}: items 1–{self.total:,}", "yellow")]
        page = runner.expand(self.ref, number - 1, 1)
        if not page.items:
            return [paint(f"item {number} is gone from the store", "yellow")]
        return [
            paint(f"{self.path}: item {number:,} of {self.total:,}", "dim"),
            *pretty(page.items[0]).splitlines(),
        ]

    def _show(self, runner: Expander, offset: int, paint: Painter) -> list[str]:
        page = runner.expand(self.ref, offset, self.page_size)
        end = offset + len(page.items)
        self.next_offset = end
        out = [paint(f"{clean(page.path)}: items {offset + 1:,}–{end:,} of {page.total:,}", "dim")]
        if page.rest and offset == 0:
            out.append(
                paint("rest: ", "dim") + json.dumps(page.rest, ensure_ascii=False, default=str)
            )
        for item in page.items:
            out += pretty(item).splitlines()
        if self.has_more:
            out.append(self.hint(paint))
        return out
