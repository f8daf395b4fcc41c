"""`run-repl repl`: the line REPL, a prompt-toolkit prompt over a workspace.

Type a snippet (Enter runs it once it is complete, Escape Enter runs it as it
is); its logs and host calls stream as they happen, then its value (the first
page of it), or its error with the place in the snippet. Ctrl-C cancels a run,
approvals are asked for inline, and `:more` pages through a big value.
With no terminal it reads stdin as one snippet and prints like `run-repl run`.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import json
import os
import shlex
import signal
import sys
import traceback
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from functools import partial
from typing import Any

from prompt_toolkit import PromptSession, print_formatted_text
from prompt_toolkit.application.current import get_app
from prompt_toolkit.auto_suggest import AutoSuggestFromHistory
from prompt_toolkit.buffer import Buffer
from prompt_toolkit.enums import DEFAULT_BUFFER
from prompt_toolkit.filters import Condition, has_focus, has_selection
from prompt_toolkit.formatted_text import ANSI, StyleAndTextTuples
from prompt_toolkit.history import FileHistory, History, InMemoryHistory
from prompt_toolkit.input import Input, create_input
from prompt_toolkit.key_binding import KeyBindings, KeyPressEvent
from prompt_toolkit.lexers import PygmentsLexer
from prompt_toolkit.output import DummyOutput, Output, create_output
from pygments.lexers.javascript import TypeScriptLexer

from ..host.loader import describe
from ..paths import data_dir as default_data_dir
from ..result_text import (
    Painter,
    format_call,
    format_error,
    format_log,
    format_result,
    use_color,
    value_lines,
)
from ..safe_text import clean, clean_call, clean_log, clean_result, printable
from ..sandbox.result import CallRecord, LogLine, RunResult
from ..sandbox.result_store import ResultRefNotFound
from ..store import ApprovalConflict
from ..workspace import Workspace
from .completion import ReplCompleter
from .input_complete import INDENT, indent_for, is_complete
from .paging import ValuePager

EXIT_OK, EXIT_ERROR, EXIT_INTERRUPTED = 0, 1, 3
HISTORY_FILE = "repl_history"
LIVE_CALLS = 12  # calls printed as they finish; past this, only a count at the end
PROMPT, CONTINUATION = "js> ", "... "

COMMANDS = {
    ":help": "commands and keys",
    ":host": "the host's functions, with signatures",
    ":history": "the last runs (:history N)",
    ":more": "the next page of the current value",
    ":page": "page N of the current value (:page N)",
    ":item": "item N of the current value, in full (:item N)",
    ":clear": "clear the screen",
    ":quit": "leave (or Ctrl-D)",
}

KEYS = [
    ("Enter", "run the snippet when it is complete, else a new line"),
    ("Ctrl-J", "a new line, even after a complete statement"),
    ("Escape Enter / Alt-Enter", "run the snippet as it is"),
    ("Tab", "complete a host function (crm. Tab), or indent"),
    ("Ctrl-N / PageDown", "the next page of the current value (at an empty prompt)"),
    ("Ctrl-C", "cancel a running snippet; at the prompt, clear the input"),
    ("Ctrl-D", "quit (at an empty prompt)"),
    ("Up / Down", "history (lines of a multi-line snippet first)"),
    ("Ctrl-X Ctrl-E", "edit the snippet in $EDITOR"),
]


async def run_line_repl(
    ws: Workspace, *, input: Input | None = None, output: Output | None = None
) -> int:
    """The line REPL over `ws` until :quit or Ctrl-D (0). With no terminal and no
    `input`, one snippet from stdin: 0 ok, 1 error, 3 interrupted (approval saved)."""
    if input is None and not sys.stdin.isatty():
        return await run_piped(ws)
    return await LineRepl(ws, input=input, output=output).loop()


async def run_piped(ws: Workspace) -> int:
    source = await asyncio.to_thread(sys.stdin.read)
    result = await ws.run(source)
    text = format_result(clean_result(result), source=source, color=use_color(sys.stdout))
    sys.stdout.write(printable(text) + "\n")
    for it in result.interruptions or []:
        print(f"saved pending approval {it.id}: {approve_command(ws, it.id)}  (or deny)")
    return {"ok": EXIT_OK, "error": EXIT_ERROR, "interrupted": EXIT_INTERRUPTED}[result.status]


def approve_command(ws: Workspace, approval_id: str) -> str:
    """The shell command that approves later, with the flags this workspace needs."""
    command = f"run-repl approvals approve {approval_id}"
    if not ws.host.is_demo:
        command += f" --host {shlex.quote(ws.host.name)}"
    if ws.data_dir.resolve() != default_data_dir().resolve():
        command += f" --data-dir {shlex.quote(str(ws.data_dir))}"
    return command


def wants_color(output: Output) -> bool:
    if (
        isinstance(output, DummyOutput)
        or os.environ.get("NO_COLOR")
        or os.environ.get("TERM") == "dumb"
    ):
        return False
    stream = getattr(output, "stdout", None)
    if stream is not None and hasattr(stream, "isatty"):
        return use_color(stream)
    return True  # a Windows console output: it has colours


class Console:
    """Prints above the prompt (the REPL is never at the prompt while it prints)."""

    def __init__(self, output: Output, color: bool) -> None:
        self.output = output
        self.paint = Painter(color)

    def print(self, *lines: str) -> None:
        if lines:
            # ANSI() turns the painter's colours into styles; printable() makes
            # sure nothing else in the text can act as a terminal control.
            print_formatted_text(ANSI(printable("\n".join(lines))), output=self.output)


@dataclass
class Live:
    """What one run (or resume) has streamed so far."""

    replayed_logs: int = 0  # a resume replays the snippet: its first logs were printed already
    logs_seen: int = 0
    calls_seen: int = 0


def _newline(buffer: Buffer) -> None:
    buffer.newline(copy_margin=False)
    buffer.insert_text(indent_for(buffer.document.text_before_cursor))


class LineRepl:
    def __init__(self, ws: Workspace, *, input: Input | None, output: Output | None) -> None:
        self.ws = ws
        self.input = input or create_input()
        self.output = output or create_output()
        self.console = Console(self.output, wants_color(self.output))
        self.paint = self.console.paint
        self.functions = describe(ws.host)
        self.pager: ValuePager | None = None
        self.always: set[str] = set()  # paths answered `a`: approved for the rest of the session
        self._cancel: asyncio.Event | None = None
        self._warned = len(ws.warnings)  # the CLI printed the ones from opening the workspace
        self.session: PromptSession[str] = PromptSession(
            PROMPT,
            multiline=True,
            prompt_continuation=CONTINUATION,
            lexer=PygmentsLexer(TypeScriptLexer),
            completer=ReplCompleter(self.functions, COMMANDS),
            complete_while_typing=True,
            auto_suggest=AutoSuggestFromHistory(),
            history=self._history(),
            key_bindings=self._bindings(),
            bottom_toolbar=self._toolbar,
            enable_open_in_editor=True,
            input=self.input,
            output=self.output,
        )
        self.question: PromptSession[str] = PromptSession(input=self.input, output=self.output)

    # ------------------------------------------------------------------ setup
    def _history(self) -> History:
        try:
            self.ws.data_dir.mkdir(parents=True, exist_ok=True)
            return FileHistory(str(self.ws.data_dir / HISTORY_FILE))
        except OSError:
            return InMemoryHistory()  # an unwritable data dir costs the history, not the REPL

    def _bindings(self) -> KeyBindings:
        kb = KeyBindings()
        editing = has_focus(DEFAULT_BUFFER) & ~has_selection
        empty = Condition(lambda: not get_app().current_buffer.text)
        more = Condition(lambda: self.pager is not None and self.pager.has_more)
        blank_line = Condition(
            lambda: not get_app().current_buffer.document.current_line_before_cursor.strip()
        )

        @kb.add("enter", filter=editing)
        def _enter(event: KeyPressEvent) -> None:
            buffer = event.current_buffer
            state = buffer.complete_state
            if state is not None and state.current_completion is not None:
                buffer.apply_completion(state.current_completion)  # Enter picks a completion
                return
            text = buffer.text
            last_line = "\n" not in text or not buffer.document.text_after_cursor.strip()
            if text.lstrip().startswith(":") or (last_line and is_complete(text)):
                buffer.validate_and_handle()
                return
            _newline(buffer)

        @kb.add("c-j", filter=editing)
        def _newline_always(event: KeyPressEvent) -> None:
            # Each snippet is a run of its own, so several complete statements
            # are typed as one snippet: Ctrl-J starts the next line without running.
            _newline(event.current_buffer)

        @kb.add("escape", "enter", filter=editing)
        def _run_now(event: KeyPressEvent) -> None:
            event.current_buffer.validate_and_handle()

        @kb.add("c-n", filter=editing & empty & more)
        @kb.add("pagedown", filter=editing & empty & more)
        def _next_page(event: KeyPressEvent) -> None:
            # Straight to the loop, not through the buffer: no ":more" in the history.
            event.app.exit(result=":more")

        @kb.add("tab", filter=editing & blank_line)
        def _indent(event: KeyPressEvent) -> None:
            event.current_buffer.insert_text(INDENT)

        @kb.add("}", filter=editing)
        @kb.add("]", filter=editing)
        @kb.add(")", filter=editing)
        def _dedent(event: KeyPressEvent) -> None:
            buffer = event.current_buffer
            before = buffer.document.current_line_before_cursor
            if before and not before.strip():
                buffer.delete_before_cursor(min(len(before), len(INDENT)))
            buffer.insert_text(event.data)

        return kb

    def _toolbar(self) -> StyleAndTextTuples:
        host = self.ws.host.name
        if len(host) > 32:
            host = "…" + host[-31:]
        hints = "Enter run · ^J new line · Esc Enter run now · Tab complete · ^C cancel/clear · ^D quit · :help"
        parts: StyleAndTextTuples = [
            ("class:bottom-toolbar.text bold", f" {host} "),
            ("", f" {hints}"),
        ]
        if self.pager is not None and self.pager.has_more:
            rest = self.pager.total - self.pager.next_offset
            parts.append(("", f" · ^N next page ({rest:,} more items)"))
        if self.always:
            parts.append(("", f" · auto-approving {len(self.always)} path(s)"))
        return parts

    @contextmanager
    def _ctrl_c_cancels(self) -> Iterator[None]:
        """While a snippet runs the terminal is not raw, so Ctrl-C is SIGINT: it
        cancels the run instead of stopping the REPL. (At the prompt it is a key,
        and prompt-toolkit puts this handler back each time it returns.)"""
        loop = asyncio.get_running_loop()

        def on_sigint(signum: int, frame: Any) -> None:
            loop.call_soon_threadsafe(self._interrupt)

        try:
            previous = signal.signal(signal.SIGINT, on_sigint)
        except ValueError:  # not the main thread: no signals here, Ctrl-C works as before
            yield
            return
        try:
            yield
        finally:
            signal.signal(signal.SIGINT, previous)

    def _interrupt(self) -> None:
        if self._cancel is not None and not self._cancel.is_set():
            self._cancel.set()
            # The terminal has echoed ^C without a newline: finish its line.
            self.console.print(self.paint(" cancelling…", "dim"))

    # ------------------------------------------------------------------ loop
    async def loop(self) -> int:
        count = len(self.functions)
        self.console.print(
            self.paint(
                f"run-repl · host {self.ws.host.name} ({count} function{'s' * (count != 1)})",
                "bold",
            )
            + self.paint(
                " · each snippet runs on its own: Ctrl-J for a new line · :help · Ctrl-D quits",
                "dim",
            )
        )
        with self._ctrl_c_cancels():
            while True:
                try:
                    text = await self.session.prompt_async()
                except KeyboardInterrupt:
                    continue  # Ctrl-C at the prompt: the input is gone, the REPL stays
                except EOFError:
                    return EXIT_OK
                if not text.strip():
                    continue
                try:
                    if text.lstrip().startswith(":"):
                        if await self.command(text.strip()):
                            return EXIT_OK
                    else:
                        await self.run_snippet(text)
                except Exception as exc:  # a bug or a broken store must not end the session
                    self.console.print(
                        self.paint(f"internal error: {type(exc).__name__}: {exc}", "red")
                    )
                    self.console.print(self.paint(traceback.format_exc().rstrip(), "dim"))

    async def run_snippet(self, source: str) -> None:
        result = await self._execute(partial(self.ws.run, source), previous=None)
        self._show(result, source)
        while result.status == "interrupted":
            decisions = await self._ask(result)
            if decisions is None:
                self._left_pending(result)
                return
            try:
                result = await self._execute(partial(self.ws.decide, decisions), previous=result)
            except (ApprovalConflict, KeyError, ValueError) as exc:
                self.console.print(self.paint(f"cannot resume: {exc}", "red"))
                return
            self._show(result, source)

    async def _execute(
        self, start: Callable[..., Awaitable[RunResult]], previous: RunResult | None
    ) -> RunResult:
        live = Live(replayed_logs=previous.logs_total if previous is not None else 0)

        def on_log(line: LogLine) -> None:
            live.logs_seen += 1
            if live.logs_seen > live.replayed_logs:
                self.console.print(format_log(clean_log(line), self.paint))

        def on_call(call: CallRecord) -> None:
            # A call is shown once, when it ends; one a resume replays was shown before.
            if call.ok is None or call.replayed:
                return
            live.calls_seen += 1
            if live.calls_seen <= LIVE_CALLS:
                self.console.print("  " + format_call(clean_call(call), self.paint))

        self._cancel = cancel = asyncio.Event()
        try:
            result = await start(on_log=on_log, on_call=on_call, cancel=cancel)
        finally:
            self._cancel = None
        if live.calls_seen > LIVE_CALLS:
            self.console.print(
                self.paint(f"  … and {live.calls_seen - LIVE_CALLS} more host calls", "dim")
            )
        for warning in self.ws.warnings[self._warned :]:  # e.g. the history could not be written
            self.console.print(self.paint(f"warning: {clean(warning)}", "yellow"))
        self._warned = len(self.ws.warnings)
        return result

    def _show(self, raw: RunResult, source: str) -> None:
        result = clean_result(raw)
        paint = self.paint
        lines: list[str] = []
        if result.logs_dropped:
            lines.append(paint(f"… {result.logs_dropped} log lines dropped (max_log_lines)", "dim"))
        self.pager = ValuePager.of(result)
        if result.status == "ok":
            # The window without its ref: the shared rendering would point at
            # `run-repl expand`; here the next page is one key away.
            lines += value_lines(result.model_copy(update={"value_ref": None}), paint)
            if self.pager is not None and self.pager.has_more:
                lines.append(self.pager.hint(paint))
        elif result.status == "error" and result.error is not None:
            lines += format_error(result.error, source, paint)
        status = {
            "ok": paint("ok", "green"),
            "error": paint("error", "red"),
            "interrupted": paint("interrupted", "yellow"),
        }
        lines.append(paint(f"{status[result.status]} in {result.duration_ms:.1f} ms", "dim"))
        self.console.print(*lines)

    # ------------------------------------------------------------------ approvals
    async def _ask(self, result: RunResult) -> dict[str, bool] | None:
        """A decision for each of the run's interruptions, or None if the person
        stopped answering (Ctrl-C or Ctrl-D): they stay pending in the store."""
        paint = self.paint
        decisions: dict[str, bool] = {}
        for it in result.interruptions or []:
            path = clean(it.path)
            args = clean(", ".join(json.dumps(a, ensure_ascii=False, default=str) for a in it.args))
            message = it.payload.get("message") if isinstance(it.payload, dict) else None
            lines = [
                paint("approval needed: ", "yellow", "bold")
                + paint(path, "bold")
                + f"({args})"
                + paint(f"  {it.id}", "dim")
            ]
            if isinstance(message, str) and message:
                lines.append("  " + clean(message))
            if path in self.always:
                lines.append(
                    paint(
                        "  approved: you answered `a` for this path earlier in this session",
                        "green",
                    )
                )
                self.console.print(*lines)
                decisions[it.id] = True
                continue
            self.console.print(*lines)
            answer = await self._question()
            if answer is None:
                return None
            if answer == "a":
                self.always.add(path)
            decisions[it.id] = answer in ("y", "a")
        return decisions

    async def _question(self) -> str | None:
        while True:
            try:
                text = await self.question.prompt_async(
                    "  approve? [y]es / [n]o / [a]lways this path: "
                )
            except (KeyboardInterrupt, EOFError):
                return None
            answer = text.strip().lower()[:1]
            if answer in ("y", "n", "a"):
                return answer
            self.console.print(
                self.paint("  answer y, n or a (Ctrl-C leaves it pending)", "yellow")
            )

    def _left_pending(self, result: RunResult) -> None:
        lines = [self.paint("left pending (saved in the store); to decide later:", "yellow")]
        lines += [
            f"  {approve_command(self.ws, it.id)}   (or deny)" for it in result.interruptions or []
        ]
        self.console.print(*lines)

    # ------------------------------------------------------------------ commands
    async def command(self, line: str) -> bool:
        """Run a `:` command; True means leave the REPL."""
        name, _, arg = line.partition(" ")
        arg = arg.strip()
        paint = self.paint
        if name in (":quit", ":q", ":exit"):
            return True
        if name in (":help", ":h", ":?"):
            self._help()
        elif name == ":host":
            self._host()
        elif name == ":history":
            self._history_list(arg)
        elif name == ":clear":
            self.output.erase_screen()
            self.output.cursor_goto(0, 0)
            self.output.flush()
        elif name in (":more", ":page", ":item"):
            self._page(name, arg)
        else:
            self.console.print(paint(f"unknown command {name}: :help lists them", "yellow"))
        return False

    def _help(self) -> None:
        paint = self.paint
        lines = [
            paint(
                "Type JavaScript or TypeScript: the body of an async function (await and return work).",
                "bold",
            ),
            "Each snippet runs on its own: nothing carries over, so write several statements as one",
            "snippet (Ctrl-J between them) and `return` what you want to see.",
        ]
        lines += [paint("commands:", "dim")] + [
            f"  {name:<10} {text}" for name, text in COMMANDS.items()
        ]
        lines += [paint("keys:", "dim")] + [f"  {key:<26} {text}" for key, text in KEYS]
        lines.append(
            paint(
                "approvals: y approves, n denies, a approves this path for the rest of the session",
                "dim",
            )
        )
        self.console.print(*lines)

    def _host(self) -> None:
        paint = self.paint
        lines = [paint(f"host {self.ws.host.name}", "bold")]
        for item in self.functions:
            flags = paint("  needs approval", "yellow") if item.needs_approval else ""
            lines.append(f"  {paint(item.js_signature, 'bold')}{flags}")
            doc = item.summary
            if doc:
                lines.append(paint(f"      {doc}", "dim"))
        self.console.print(*lines)

    def _history_list(self, arg: str) -> None:
        limit = int(arg) if arg.isdigit() else 10
        runs = self.ws.store.list_runs(limit=limit)
        if not runs:
            self.console.print(self.paint("no runs yet", "dim"))
            return
        lines = []
        for r in reversed(runs):  # oldest first, so the last one sits next to the prompt
            when = dt.datetime.fromtimestamp(r.started_at).strftime("%H:%M:%S")
            status = r.status + (f" {r.error_code}" if r.error_code else "")
            lines.append(
                f"{self.paint(when, 'dim')}  {status:<30} {r.duration_ms:8.1f} ms  {clean(r.title)}"
            )
        self.console.print(*lines)

    def _page(self, name: str, arg: str) -> None:
        paint = self.paint
        if self.pager is None:
            self.console.print(paint("no current value: run a snippet that returns one", "yellow"))
            return
        if name != ":more" and not arg.isdigit():
            self.console.print(paint(f"{name} needs a number: {name} 2", "yellow"))
            return
        try:
            if name == ":more":
                lines = self.pager.more(self.ws.runner, paint)
            elif name == ":page":
                lines = self.pager.page(self.ws.runner, int(arg), paint)
            else:
                lines = self.pager.item(self.ws.runner, int(arg), paint)
        except ResultRefNotFound as exc:
            lines = [paint(f"{exc.code}: {exc}", "red")]
        self.console.print(*lines)
