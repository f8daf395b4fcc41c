"""The host catalog (as harlequin's data catalog): the host's namespaces and functions as a
tree, with signatures, an approval badge, and the highlighted function's doc below.

Enter (or a click) on a function inserts a call to it at the editor's cursor;
ctrl+b hides and shows the panel. The functions are the host's description
(`host.loader.describe`), the manifest the sandbox checks every call against.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import ClassVar

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical, VerticalScroll
from textual.message import Message
from textual.widgets import Static, Tree
from textual.widgets.tree import TreeNode

from ...host.loader import FunctionInfo
from ...present.rich_render import lines_to_text
from ...present.styled import Line, line, styled
from ..guest_text import safe_text
from ..themes import present_styles

APPROVAL_BADGE = "⚑"
"""Beside a function that asks a person before it runs."""


def doc_lines(info: FunctionInfo) -> list[Line]:
    """A function's doc as the catalog and the editor's doc key show it."""
    out = [line(("path", info.js_signature))]
    flags: list[str | tuple[str, str]] = []
    if info.needs_approval:
        flags.append(("warn bold", f"{APPROVAL_BADGE} needs approval: a person decides each call"))
    if info.is_async:
        flags.append(("dim", "  async" if flags else "async"))
    if flags:
        out.append(line(*flags))
    out.append(styled("dim", f"python {info.python_signature}"))
    out.append([])
    out += [line(text) for text in (info.doc or "(no docstring)").splitlines()]
    return out


def tree_of(functions: Sequence[FunctionInfo]) -> dict[str, object]:
    """Nested dicts of the functions' paths: namespaces map to dicts, functions to infos."""
    root: dict[str, object] = {}
    for info in functions:
        *namespaces, name = info.path.split(".")
        node = root
        for part in namespaces:
            child = node.setdefault(part, {})
            assert isinstance(child, dict)
            node = child
        node[name] = info
    return root


class CatalogTree(Tree[FunctionInfo | None]):
    """The namespaces and functions; enter on a function inserts a call to it."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("enter", "select_cursor", "Insert call", id="catalog.insert"),
    ]


class HostCatalog(Vertical):
    """The host's functions as a tree, and the doc of the one highlighted."""

    HELP: ClassVar[str] = f"""\
### Host catalog
The functions the host offers the snippet, by namespace: each with how a
snippet calls it, and {APPROVAL_BADGE} when a person must approve each call.
The doc of the highlighted function shows below the tree.

- **enter** (or a click) on a function: insert a call to it at the editor's cursor
- **←/→**, **space**: fold and unfold a namespace
- **ctrl+b**: hide or show this panel
"""

    DEFAULT_CSS = """
    HostCatalog { width: 38; }
    HostCatalog.-hidden { display: none; }
    HostCatalog CatalogTree { height: 1fr; background: $surface; overflow-x: hidden; }
    HostCatalog #catalog-doc-scroll {
        height: auto; max-height: 45%; border-top: solid $foreground 20%;
        background: $surface;
    }
    HostCatalog #catalog-doc { padding: 0 1; }
    """

    @dataclass
    class InsertCall(Message):
        """Insert a call to this function at the editor's cursor."""

        info: FunctionInfo

    def __init__(self, functions: Sequence[FunctionInfo], *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.functions = list(functions)
        self._tree: CatalogTree = CatalogTree("host", id="catalog-tree")
        self._tree.show_root = False
        self._doc = Static(id="catalog-doc")

    def compose(self) -> ComposeResult:
        yield self._tree
        with VerticalScroll(id="catalog-doc-scroll") as scroll:
            scroll.can_focus = False
            yield self._doc

    def show_functions(self, functions: Sequence[FunctionInfo]) -> None:
        """The host's functions changed (an upstream's tool list did): show these."""
        self.functions = list(functions)
        self._fill()

    def on_mount(self) -> None:
        self._fill()
        self.watch(self.app, "theme", self._fill, init=False)

    def _fill(self) -> None:
        tree = self._tree
        tree.clear()
        styles = present_styles(self.app.current_theme)
        warn = styles["warn"]

        def add(node: TreeNode[FunctionInfo | None], items: dict[str, object]) -> None:
            for name, item in items.items():
                if isinstance(item, dict):
                    child = node.add(Text(safe_text(name), style="bold"), None, expand=True)
                    add(child, item)
                    continue
                assert isinstance(item, FunctionInfo)
                label = Text(safe_text(name), style=styles["path"])
                label.append(safe_text(item.js_signature[len(item.path) :]), style=styles["dim"])
                if item.needs_approval:
                    label.append(f" {APPROVAL_BADGE}", style=f"bold {warn}")
                node.add_leaf(label, item)

        add(tree.root, tree_of(self.functions))
        self._show_doc(None)

    @property
    def tree(self) -> CatalogTree:  # type: ignore[override]  # the catalog's Tree widget, not DOMNode's debug tree
        return self._tree

    def _show_doc(self, info: FunctionInfo | None) -> None:
        if info is None:
            count = len(self.functions)
            self._doc.update(
                Text(
                    f"{count} function{'s' if count != 1 else ''}; "
                    f"{APPROVAL_BADGE} asks a person first. enter inserts a call.",
                    style=present_styles(self.app.current_theme)["dim"],
                )
            )
            return
        self._doc.update(lines_to_text(doc_lines(info), present_styles(self.app.current_theme)))

    @on(Tree.NodeHighlighted, "#catalog-tree")
    def _highlighted(self, event: Tree.NodeHighlighted[FunctionInfo | None]) -> None:
        event.stop()
        self._show_doc(event.node.data)

    @on(Tree.NodeSelected, "#catalog-tree")
    def _selected(self, event: Tree.NodeSelected[FunctionInfo | None]) -> None:
        event.stop()
        if event.node.data is not None:
            self.post_message(self.InsertCall(event.node.data))
