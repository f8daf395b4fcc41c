"""The IDE app: what is the same on every screen. Settings, themes, the keymap and the
app-wide keys live here; the panels and the workflow (runs, approvals, files) are the
main screen's (`main_screen.py`), as posting splits `Posting` from its `MainScreen`.
The keys stay the App's so they work over every screen as they always have (F6 from
the history, F1 anywhere); their actions are the main screen's.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, ClassVar

from textual.app import App
from textual.binding import Binding, BindingType
from textual.notifications import SeverityLevel
from textual.widgets import TextArea

from ..host.loader import describe
from ..present.approvals import message_fragments
from ..present.sanitize import safe
from ..present.styled import plain
from ..workspace import Workspace
from .commands import IdeCommands
from .components.approval_prompt import ApprovalPrompt
from .components.editor.buffers import BufferStore
from .guest_text import safe_lines, safe_text
from .keymap import KeyHints
from .main_screen import MainScreen


class RunReplApp(App[int]):
    TITLE = "run-repl"
    # Absolute, so a subclass defined elsewhere still finds it.
    CSS_PATH = Path(__file__).with_name("app.tcss")
    COMMANDS: ClassVar[Any] = App.COMMANDS | {IdeCommands}

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("ctrl+enter,ctrl+j,f5", "run", "Run", id="app.run", priority=True),
        Binding("escape,ctrl+c", "cancel", "Cancel", id="app.cancel", priority=True),
        # Before the focused widget's keys: the keys typed right after F3 in one burst are
        # then forwarded to the prompt (to be ignored as too soon), never to the editor.
        Binding("f3", "decide", "Decide", id="app.decide", priority=True),
        # Before the editor's own F6 (select the line): the inbox is one key from anywhere.
        # The status bar shows it (with the count) whenever approvals wait.
        Binding("f6", "approvals", "Approvals", id="app.approvals", priority=True, show=False),
        Binding("ctrl+o", "jump_to_panel", "Jump", id="app.jump"),
        Binding("ctrl+b", "toggle_catalog", "Catalog", id="app.catalog", show=False),
        Binding("f4", "focus_next_panel", "Next panel", id="app.next_panel", show=False),
        Binding(
            "shift+f4",
            "focus_next_panel(-1)",
            "Previous panel",
            id="app.previous_panel",
            show=False,
        ),
        Binding("ctrl+r", "rerun", "Re-run", id="app.rerun"),
        Binding("f8", "open_file", "Open file", id="app.open", show=False),
        Binding("ctrl+s", "save_file", "Save", id="app.save", show=False),
        Binding(
            "ctrl+g", "external_editor", "Edit in $EDITOR", id="app.external_editor", show=False
        ),
        Binding("f2", "history", "History", id="app.history"),
        Binding("f1", "help", "Help", id="app.help"),
        # Known to everyone, listed in F1 and the palette: the footer keeps its room for Run.
        Binding("ctrl+q", "quit", "Quit", id="app.quit", show=False),
    ]
    # Keys whose every alternative the footer shows: ctrl+enter is plain enter in
    # many terminals, so `^⏎` alone would hide the keys that do work.
    ALL_KEYS_SHOWN: ClassVar[frozenset[str]] = frozenset({"app.run"})

    def __init__(
        self,
        workspace: Workspace,
        *,
        file: str | None = None,
        source: str | None = None,
        buffers_path: Path | None = None,
    ) -> None:
        super().__init__()
        self.ws = workspace
        self.initial_file = file
        self.initial_source = source
        self.buffer_store = BufferStore(buffers_path or workspace.data_dir / "buffers.json")
        self.key_hints = KeyHints(workspace.settings.keymap)
        """The keys of each binding id as the person has them: hints say these."""
        self.host_functions = describe(workspace.host)
        """The host's functions (the manifest the sandbox checks): the catalog and completion."""
        self.theme_problems: list[str] = []
        self.editor_themes: dict[str, Any] = {}
        self.main = MainScreen(self)
        """The panels and the workflow: the first screen, under every other."""
        # Chosen before anything is styled: set in on_mount, the theme restyled every
        # widget a second time (a fifth of starting the app).
        self._install_themes()

    def get_default_screen(self) -> MainScreen:
        return self.main

    def on_mount(self) -> None:
        self.theme_changed_signal.subscribe(self, self._on_theme_changed)
        self._apply_editor_theme(self.theme)
        if self.ws.settings.keymap:
            self.set_keymap(self.ws.settings.keymap)

    def notify(
        self,
        message: str,
        *,
        title: str = "",
        severity: SeverityLevel = "information",
        timeout: float | None = None,
        markup: bool = False,
    ) -> None:
        """A toast, never read as markup: messages carry paths, errors and guest text,
        and markup there could restyle the toast or bind a click to an action."""
        super().notify(
            safe_lines(message),
            title=safe_text(title),
            severity=severity,
            timeout=timeout,
            markup=False,
        )

    def get_key_display(self, binding: Binding) -> str:
        if binding.id in self.ALL_KEYS_SHOWN:
            keys = [
                active.binding
                for active in self.screen.active_bindings.values()
                if active.binding.id == binding.id
            ]
            if len(keys) > 1:
                return "/".join(super(RunReplApp, self).get_key_display(k) for k in keys)
        return super().get_key_display(binding)

    # ------------------------------------------------------------------ themes
    def get_theme_variable_defaults(self) -> dict[str, str]:
        from .themes import syntax_variable_defaults

        # CSS that uses $syntax-* must work under themes that do not define them.
        return {**super().get_theme_variable_defaults(), **syntax_variable_defaults(True)}

    def _install_themes(self) -> None:
        from .themes import load_themes, no_color_active, theme_for_no_color

        themes, problems = load_themes()
        self.theme_problems = problems
        for loaded in themes:
            self.register_theme(loaded.app_theme)
            self.editor_themes[loaded.app_theme.name] = loaded.editor_theme
        wanted = self.ws.settings.theme
        if no_color_active():
            wanted = theme_for_no_color()
        elif wanted not in self.available_themes:
            self.theme_problems.append(f"theme {wanted!r} is not installed; using run-repl-dark.")
            wanted = "run-repl-dark" if "run-repl-dark" in self.available_themes else self.theme
        self.theme = wanted

    def _apply_editor_theme(self, name: str) -> None:
        for area in self.query(TextArea):
            self.style_editor(area)

    def style_editor(self, area: TextArea) -> None:
        """Give an editor the app theme's syntax colours (editors made later call this too)."""
        editor_theme = self.editor_themes.get(self.theme)
        if editor_theme is not None:
            area.register_theme(editor_theme)
            area.theme = editor_theme.name
        else:
            area.theme = "css"

    def _on_theme_changed(self, theme: Any) -> None:
        self._apply_editor_theme(theme.name)
        from ..config import save_setting

        if not theme.name.startswith("ansi-"):
            try:
                save_setting("theme", theme.name)
            except OSError as exc:
                self.notify(f"could not save the theme choice: {exc}", severity="warning")

    # ------------------------------------------------------------------ keys
    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        main = self.main
        if action == "cancel":
            # Escape and ctrl+c mean "cancel" only while a run is going.
            return main.running and self.screen is main
        if action == "run" and self.screen is not main:
            return False
        if action == "decide":
            # Shown (and bound) only while an approval waits and the prompt is not deciding.
            prompt = main.query_one(ApprovalPrompt)
            return prompt.current is not None and not prompt.engaged
        return True

    # The app-wide keys act on the main screen, whichever screen is on top.
    def action_run(self) -> None:
        self.main.action_run()

    def action_cancel(self) -> None:
        self.main.action_cancel()

    def action_decide(self) -> None:
        self.main.action_decide()

    def action_approvals(self) -> None:
        self.main.action_approvals()

    def action_jump_to_panel(self) -> None:
        self.main.action_jump_to_panel()

    def action_toggle_catalog(self) -> None:
        self.main.action_toggle_catalog()

    def action_focus_next_panel(self, step: int = 1) -> None:
        self.main.action_focus_next_panel(step)

    def action_rerun(self) -> None:
        self.main.action_rerun()

    def action_open_file(self) -> None:
        self.main.action_open_file()

    def action_save_file(self) -> None:
        self.main.action_save_file()

    def action_external_editor(self) -> None:
        self.main.action_external_editor()

    def action_history(self) -> None:
        self.main.action_history()

    def action_help(self) -> None:
        from .screens.help import HelpScreen

        focused_help = None
        node = self.focused
        while node is not None and focused_help is None:
            focused_help = getattr(type(node), "HELP", None)
            node = node.parent  # type: ignore[assignment]  # a DOMNode's parent; only HELP is read
        self.push_screen(HelpScreen(focused_help, self.binding_table()))

    def binding_table(self) -> list[tuple[str, str, str]]:
        rows = []
        seen: set[str] = set()
        for key, active in self.active_bindings.items():
            binding = active.binding
            label = binding.description or binding.action
            ident = binding.id or ""
            if (ident or label) in seen:
                continue
            seen.add(ident or label)
            keys = binding.key_display or self.get_key_display(binding) or key
            rows.append((keys, label, ident))
        return rows

    # ------------------------------------------------------------------ leaving
    def on_unmount(self) -> None:
        self.main.leave()

    async def action_quit(self) -> None:
        self.main.persist_buffers()
        self.exit(0)


def run_app(ws: Workspace, *, file: str | None = None, source: str | None = None) -> int:
    app = RunReplApp(ws, file=file, source=source)
    code = app.run()
    pending = ws.store.list_approvals()
    if pending:
        print(f"{len(pending)} approval(s) pending in {ws.store.location}:")
        for a in pending[:10]:
            message = plain(message_fragments(a.message))  # one line, as every screen says it
            print(safe(f"  {a.id}  {a.path}  — {message}"))
        print("Approve or deny later: run-repl approvals approve ID  (or deny ID)")
    return code or 0
