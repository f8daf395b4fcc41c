"""One item of a value as a tree: children are added when a node opens, TREE_BATCH at a
time, so a node with a million children mounts no more than a batch at once."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from itertools import islice
from typing import Any, ClassVar

from rich.style import Style
from rich.text import Text
from textual import on
from textual.widgets import Tree
from textual.widgets.tree import TreeNode

from ....present.whole_value import dumps
from ...guest_text import safe_text
from .lines import PALETTE, cut, token_styles

TREE_BATCH = 200  # children added per expansion


@dataclass
class TreeItem:
    """A tree node's JSON value and how many of its children are in the tree so far."""

    key: str
    value: Any
    filled: int = 0


@dataclass
class _TreeMore:
    """The last child of a node whose other children are not added yet."""

    parent: TreeNode[Any]
    remaining: int


def _size(value: Any) -> int:
    return len(value) if isinstance(value, dict | list) else 0


class ValueTree(Tree[Any]):
    """One item as a tree: children are added when a node opens, TREE_BATCH at a time."""

    COMPONENT_CLASSES: ClassVar[set[str]] = Tree.COMPONENT_CLASSES | {
        f"value-view--{name}" for name in PALETTE
    }

    _styles: dict[str, Style] | None = None

    def notify_style_update(self) -> None:
        self._styles = None
        super().notify_style_update()

    def show_value(self, label: str, value: Any) -> None:
        self.reset(Text(safe_text(label)), TreeItem(label, value))
        root = self.root
        root.allow_expand = _size(value) > 0
        self._fill(root)
        root.expand()
        self.move_cursor(root)

    def _fill(self, node: TreeNode[Any]) -> None:
        data = node.data
        if not isinstance(data, TreeItem):
            return
        value, start = data.value, data.filled
        pairs: Iterator[tuple[str, Any]]
        if isinstance(value, dict):
            pairs = islice(iter(value.items()), start, start + TREE_BATCH)
        elif isinstance(value, list):
            pairs = ((f"[{i}]", v) for i, v in enumerate(value[start : start + TREE_BATCH], start))
        else:
            return
        for key, child in pairs:
            label = Text(safe_text(cut(str(key), 200)))
            if _size(child):
                node.add(label, TreeItem(str(key), child))
            else:
                node.add_leaf(label, TreeItem(str(key), child))
        data.filled = min(len(value), start + TREE_BATCH)
        if data.filled < len(value):
            node.add_leaf(Text("…"), _TreeMore(node, len(value) - data.filled))

    @on(Tree.NodeExpanded)
    def _expanded(self, event: Tree.NodeExpanded[Any]) -> None:
        event.stop()
        data = event.node.data
        if isinstance(data, TreeItem) and data.filled == 0:
            self._fill(event.node)

    @on(Tree.NodeCollapsed)
    def _collapsed(self, event: Tree.NodeCollapsed[Any]) -> None:
        event.stop()

    @on(Tree.NodeHighlighted)
    def _highlighted(self, event: Tree.NodeHighlighted[Any]) -> None:
        event.stop()

    @on(Tree.NodeSelected)
    def _selected(self, event: Tree.NodeSelected[Any]) -> None:
        event.stop()
        more = event.node.data
        if isinstance(more, _TreeMore):
            event.node.remove()
            self._fill(more.parent)

    def render_label(self, node: TreeNode[Any], base_style: Style, style: Style) -> Text:
        # Colours are looked up at render time so the tree follows the theme.
        data = node.data
        if self._styles is None:
            self._styles = token_styles(self)
        color = self._styles.__getitem__

        label = Text()
        if isinstance(data, _TreeMore):
            label.append(
                f"… {data.remaining:,} more (enter: show {min(data.remaining, TREE_BATCH):,})",
                color("punct"),
            )
        elif isinstance(data, TreeItem):
            value = data.value
            label.append(safe_text(cut(data.key, 200)), color("key"))
            label.append(": ", color("punct"))
            if isinstance(value, dict):
                label.append(f"{{…}} {len(value):,} keys" if value else "{}", color("punct"))
            elif isinstance(value, list):
                label.append(f"[…] {len(value):,} items" if value else "[]", color("punct"))
            else:
                if isinstance(value, str):
                    name = "string"
                elif isinstance(value, bool) or value is None:
                    name = "literal"
                else:
                    name = "number"
                label.append(safe_text(cut(dumps(value), 200)), color(name))
        label.stylize(style)
        if node.allow_expand:
            prefix = (
                self.ICON_NODE_EXPANDED if node.is_expanded else self.ICON_NODE,
                base_style + Style(bold=True),
            )
            return Text.assemble(prefix, label)
        return label
