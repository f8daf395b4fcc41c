"""What the editor offers as a snippet is typed, drawn over the screen at the cursor: the
host paths that complete the word (`CompletionMenu`) and the signature of the host
call the cursor is in, with the argument being typed in bold (`SignatureHint`).

Neither takes the focus: the editor keeps every key and drives them (up/down
choose, tab or enter take the offer, escape closes it). What they show comes
from `present.completion`, over the manifest the sandbox checks calls against.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from rich.text import Text
from textual.geometry import Offset, Region, Size
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option

from ...host.loader import FunctionInfo
from ...present.completion import Candidate, parameters
from ..guest_text import safe_text
from .host_catalog import APPROVAL_BADGE

MENU_ROWS = 8
MENU_WIDTH = 72


def candidate_label(candidate: Candidate, styles: Mapping[str, str]) -> Text:
    """One offer: `crm.getAccount(accountId) ⚑  One account by id…`."""
    label = Text()
    if candidate.close:
        label.append("did you mean ", style=f"{styles.get('dim', 'dim')} italic")
    label.append(safe_text(candidate.path), style=styles.get("path", "bold"))
    if candidate.kind == "function":
        label.append(
            safe_text(candidate.detail[len(candidate.path) :]), style=styles.get("dim", "dim")
        )
    else:
        label.append(f".  {candidate.detail}", style=styles.get("dim", "dim"))
    if candidate.needs_approval:
        label.append(f" {APPROVAL_BADGE}", style=f"bold {styles.get('warn', 'yellow')}")
    if candidate.summary:
        label.append(
            f"  {safe_text(candidate.summary)}", style=f"{styles.get('dim', 'dim')} italic"
        )
    label.no_wrap = True
    label.overflow = "ellipsis"
    label.truncate(MENU_WIDTH - 6, overflow="ellipsis")
    return label


def signature_text(info: FunctionInfo, argument: int, styles: Mapping[str, str]) -> Text:
    """`crm.getAccount(accountId, limit?)` with the argument at the cursor in bold."""
    params = parameters(info)
    text = Text(safe_text(info.path), style=styles.get("path", "bold"))
    text.append("(")
    for n, name in enumerate(params):
        if n:
            text.append(", ")
        text.append(safe_text(name), style="bold reverse" if n == argument else "")
    text.append(")")
    if info.needs_approval:
        text.append(f" {APPROVAL_BADGE} needs approval", style=f"bold {styles.get('warn', '')}")
    if info.summary:
        text.append(f"  {safe_text(info.summary)}", style=f"{styles.get('dim', 'dim')} italic")
    return text


def place(cursor: Offset, size: Size, screen: Size, *, above: bool = False) -> Offset:
    """Where a box of `size` goes: under the cursor's line (above it when `above`, or when
    there is no room below), moved left as far as the screen needs."""
    x = max(0, min(cursor.x, screen.width - size.width))
    below = cursor.y + 1
    if above or below + size.height > screen.height:
        return Offset(x, max(0, cursor.y - size.height))
    return Offset(x, below)


class CompletionMenu(OptionList, can_focus=False):
    """The offers for the word at the editor's cursor; the editor moves the highlight."""

    DEFAULT_CSS = f"""
    CompletionMenu {{
        position: absolute; overlay: screen; display: none;
        width: auto; min-width: 24; max-width: {MENU_WIDTH}; height: auto;
        max-height: {MENU_ROWS + 2};
        border: round $accent; background: $surface; padding: 0;
    }}
    CompletionMenu.-open {{ display: block; }}
    CompletionMenu > .option-list--option {{ padding: 0 1; }}
    """

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.candidates: list[Candidate] = []

    def show(
        self,
        candidates: Sequence[Candidate],
        index: int,
        at: Offset,
        styles: Mapping[str, str],
    ) -> None:
        """Offer these at screen offset `at` (the start of the word being typed)."""
        if list(candidates) != self.candidates:
            self.candidates = list(candidates)
            self.clear_options()
            self.add_options([Option(candidate_label(c, styles)) for c in candidates])
        self.highlighted = index
        width = min(
            MENU_WIDTH, max(24, max(len(candidate_label(c, styles)) for c in candidates) + 4)
        )
        height = min(len(candidates), MENU_ROWS) + 2
        self.styles.offset = place(at, Size(width, height), self.screen.size)
        self.add_class("-open")

    def close(self) -> None:
        self.candidates = []
        self.remove_class("-open")

    @property
    def is_open(self) -> bool:
        return self.has_class("-open")


class SignatureHint(Static):
    """The host call the cursor is in: its parameters, the one being typed in bold."""

    DEFAULT_CSS = """
    SignatureHint {
        position: absolute; overlay: screen; display: none;
        width: auto; max-width: 100; height: 1; padding: 0 1;
        background: $panel; color: $text;
    }
    SignatureHint.-open { display: block; }
    """

    def show(
        self,
        info: FunctionInfo,
        argument: int,
        at: Offset,
        styles: Mapping[str, str],
        within: Region | None = None,
    ) -> None:
        """Show the signature on the row above `at` (the cursor), inside `within` (the
        editor's text area): below the cursor's row when the one above is outside it
        (the tab strip), and cut at its right edge rather than drawn over the next panel."""
        text = signature_text(info, argument, styles)
        area = within or Region(0, 0, *self.screen.size)
        width = min(100, text.cell_len + 2, max(1, area.width))
        if text.cell_len + 2 > width:
            text.truncate(max(1, width - 2), overflow="ellipsis")
        self.update(text)
        x = max(area.x, min(at.x, area.right - width))
        y = at.y - 1 if at.y - 1 >= area.y else at.y + 1
        if y >= area.bottom:  # a one-row editor: the row above, whatever it holds
            y = max(0, at.y - 1)
        self.styles.width = width
        self.styles.offset = Offset(x, y)
        self.add_class("-open")

    def close(self) -> None:
        self.remove_class("-open")
