"""The command palette's run-repl commands (ctrl+p), as a Textual `Provider` (as
posting's `PostingProvider`): the IDE's actions, every action bound where the focus is
(so nothing is reachable by key alone), and the demo's examples. Textual's own system
commands (themes, quit, keys) come from its `SystemCommandsProvider` beside this one.
"""

from __future__ import annotations

from collections.abc import Iterator
from functools import partial
from typing import TYPE_CHECKING, cast

from textual.app import SystemCommand
from textual.command import DiscoveryHit, Hit, Hits, Provider

from .messages import OpenInEditor

if TYPE_CHECKING:
    from .app import RunReplApp

# Actions the commands below already offer (or Textual's provider does): the listing of
# bound actions leaves them out.
OFFERED = frozenset(
    {
        "run",
        "approvals",
        "toggle_catalog",
        "cancel",
        "rerun",
        "history",
        "open_file",
        "save_file",
        "command_palette",
        "quit",
    }
)


class IdeCommands(Provider):
    """The IDE's palette commands, for the screen the palette was opened on."""

    def commands(self) -> Iterator[SystemCommand]:
        ide = cast("RunReplApp", self.app)
        main = ide.main
        hints = ide.key_hints
        yield SystemCommand("Run", "Run the buffer (or the selection)", main.action_run)
        yield SystemCommand("Cancel the run", "Stop the running snippet now", main.action_cancel)
        yield SystemCommand("Re-run", "Run the last snippet again", main.action_rerun)
        yield SystemCommand(
            "History", "Past runs: open one or load its source", main.action_history
        )
        yield SystemCommand(
            "New buffer",
            "A new editor tab",
            lambda: main.run_worker(main.editor_tabs.action_new_buffer()),
        )
        yield SystemCommand("Open file", "Open a snippet file in a new tab", main.action_open_file)
        yield SystemCommand("Save file", "Save the buffer", main.action_save_file)
        yield SystemCommand("Clear logs", "Empty the log panel", main.logs.clear)
        yield SystemCommand(
            "Toggle host catalog",
            f"Show or hide the host's functions ({hints.keys('app.catalog')})",
            main.action_toggle_catalog,
        )
        yield SystemCommand(
            "Host functions",
            "The host catalog: what the host offers, with signatures and docs",
            lambda: main.action_focus_panel("catalog"),
        )
        yield SystemCommand(
            "Approvals inbox",
            "Every approval waiting in the store, from any process: decide them here "
            f"({hints.keys('app.approvals')})",
            main.action_approvals,
        )
        if ide.ws.host.is_demo:
            yield SystemCommand(
                "Reset the demo data",
                "Undo the publishes and refunds: the drafts and orders as first made "
                "(asks first; `run-repl reset-demo` does it too)",
                main.action_reset_demo,
            )
        seen = set(OFFERED)
        for active in self.screen.active_bindings.values():
            binding = active.binding
            if not binding.description or binding.action in seen:
                continue
            seen.add(binding.action)
            keys = ide.get_key_display(binding)
            yield SystemCommand(
                binding.description,
                f"{keys}" + (f"  ·  {binding.id}" if binding.id else ""),
                partial(ide.run_action, binding.action, active.node),
            )
        for title, source in self._examples():
            yield SystemCommand(
                f"Example: {title}",
                "Open this example in a new tab",
                lambda s=source, t=title: main.post_message(OpenInEditor(s, t)),
            )

    def _examples(self) -> list[tuple[str, str]]:
        if not cast("RunReplApp", self.app).ws.host.is_demo:
            return []
        from ..host.demo import DEMO_EXAMPLES

        return list(DEMO_EXAMPLES)

    async def discover(self) -> Hits:
        for title, help_text, callback, discover in sorted(self.commands(), key=lambda c: c[0]):
            if discover:
                yield DiscoveryHit(title, callback, help=help_text)

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        for title, help_text, callback, *_ in self.commands():
            if (score := matcher.match(title)) > 0:
                yield Hit(score, matcher.highlight(title), callback, help=help_text)
