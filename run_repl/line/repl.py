"""`run-repl repl`: the line REPL, a prompt-toolkit prompt over a workspace.

Type a snippet (Enter runs it once it is complete, Escape Enter runs it as it
is); its logs and host calls stream as they happen, then its value (the first
page of it), or its error with the place in the snippet. Ctrl-C cancels a run,
approvals are asked for inline, and `:more` pages through a big value.
With no terminal it reads stdin as one snippet and ends like `run-repl run`
(a value into a file or a pipe goes out whole).

Everything it prints is worded by `run_repl.present` and printed as
prompt-toolkit formatted text (fragments, sanitized as they are written).
"""

from __future__ import annotations

import asyncio
import os
import select
import signal
import sys
import termios
import traceback
from collections.abc import Awaitable, Callable, Iterable, Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from functools import partial
from typing import Any

from prompt_toolkit import PromptSession, print_formatted_text
from prompt_toolkit.application.current import get_app
from prompt_toolkit.auto_suggest import AutoSuggestFromHistory
from prompt_toolkit.buffer import Buffer
from prompt_toolkit.enums import DEFAULT_BUFFER
from prompt_toolkit.filters import Condition, has_focus, has_selection
from prompt_toolkit.formatted_text import StyleAndTextTuples
from prompt_toolkit.history import FileHistory, History, InMemoryHistory
from prompt_toolkit.input import Input, create_input
from prompt_toolkit.input.typeahead import clear_typeahead
from prompt_toolkit.key_binding import KeyBindings, KeyPressEvent
from prompt_toolkit.lexers import PygmentsLexer
from prompt_toolkit.output import DummyOutput, Output, create_output
from pygments.lexers.javascript import TypeScriptLexer

from ..host.loader import describe
from ..present import (
    ExitCode,
    Line,
    ValuePager,
    call_line,
    dropped_logs_lines,
    error_lines,
    function_lines,
    history_lines,
    interruption_lines,
    left_pending_lines,
    line,
    log_rows,
    result_status_line,
    styled,
    value_lines,
)
from ..present.approvals import SESSION_CONFIRM, session_note, session_question
from ..present.color import color_enabled
from ..present.ptk_render import PTK_STYLE, to_formatted_text
from ..present.rich_render import TerminalWriter
from ..present.shell import Output as ShellOutput
from ..present.shell import SourceError, read_source, source_too_large, write_run
from ..present.wrapping import wrap_lines
from ..sandbox.result import CallRecord, LogLine, RunResult
from ..store import ApprovalConflict
from ..store.approvals.dispatch import result_of
from ..workspace import Workspace
from .completion import ReplCompleter
from .input_complete import INDENT, indent_for, is_complete

HISTORY_FILE = "repl_history"
LIVE_CALLS = 12  # calls printed as they finish; past this, only a count at the end
PROMPT, CONTINUATION = "js> ", "... "
QUESTION = "  approve? y yes · n no · a always (this session) — then Enter: "
ANSWERS = {"y": "y", "yes": "y", "n": "n", "no": "n", "a": "a", "always": "a"}

KEYS = [
    ("Enter", "run the snippet when it is complete, else a new line"),
    ("Ctrl-J", "a new line, even after a complete statement"),
    ("Escape Enter / Alt-Enter", "run the snippet as it is"),
    ("Tab", "complete a host function (crm. Tab), or indent"),
    ("Ctrl-N / PageDown", "the next page of the current value (at an empty prompt)"),
    ("Ctrl-C", "cancel a running snippet; at the prompt, clear the input"),
    ("Ctrl-D", "quit (at an empty prompt)"),
    ("Up / Down", "history (lines of a multi-line snippet first)"),
    ("Ctrl-X Ctrl-E", "edit the snippet in $VISUAL or $EDITOR, then run it (as bash does)"),
]


async def run_line_repl(
    ws: Workspace, *, input: Input | None = None, output: Output | None = None
) -> int:
    """The line REPL over `ws` until :quit or Ctrl-D (0). With no terminal and no
    `input`, one snippet from stdin, ended as `run-repl run` ends (see ExitCode)."""
    if input is None and not sys.stdin.isatty():
        return await run_piped(ws)
    return await LineRepl(ws, input=input, output=output).loop()


async def run_piped(ws: Workspace) -> int:
    shell = ShellOutput(TerminalWriter(sys.stdout), TerminalWriter(sys.stderr))
    shell.seen_warnings = len(ws.warnings)  # the CLI printed the ones from opening it
    limit = ws.runner.limits.max_source_bytes
    try:
        source, too_large = await asyncio.to_thread(read_source, "-", limit)
    except SourceError as exc:
        shell.err.line(styled("error", f"run-repl: {exc}"))
        return ExitCode.USAGE
    result = source_too_large("-", limit) if too_large else await ws.run(source)
    shell.warnings(ws.warnings)
    # As `run-repl run` does: a person at a terminal reads the first window; a file
    # or a pipe gets the value whole (streamed from the store), or is told it is cut.
    return write_run(
        result,
        source,
        shell,
        as_json=False,
        not_saved=ws.not_saved_reason(result),
        approve_command=ws.approve_command,
        whole=None if _is_terminal(sys.stdout) else ws.runner.expand,
    )


def _is_terminal(stream: Any) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):  # a closed or stand-in stream
        return False


def wants_color(output: Output) -> bool:
    if isinstance(output, DummyOutput):
        return False
    stream = getattr(output, "stdout", None)
    return color_enabled(stream if stream is not None and hasattr(stream, "isatty") else None)


class Console:
    """Prints lines above the prompt (the REPL is never at the prompt while it prints)."""

    def __init__(self, output: Output, color: bool) -> None:
        self.output = output
        self.color = color

    def print(self, lines: Iterable[Line]) -> None:
        lines = list(lines)
        if lines:
            print_formatted_text(
                to_formatted_text(lines, color=self.color),
                style=PTK_STYLE,
                output=self.output,
                end="",
            )

    def say(self, style: str, text: str) -> None:
        self.print([styled(style, text)])

    def question(self, lines: Iterable[Line]) -> None:
        """An approval question, wrapped here at the terminal's width with every wrapped
        row marked (`present.wrapping`): the terminal's own wrapping could start a row
        with a snippet's text."""
        try:
            width: int | None = self.output.get_size().columns
        except OSError:
            width = None
        self.print(wrap_lines(lines, width))


@dataclass
class Live:
    """What one run (or resume) has streamed so far."""

    replayed_logs: int = 0  # a resume replays the snippet: its first logs were printed already
    logs_seen: int = 0
    calls_seen: int = 0


@dataclass(frozen=True)
class ReplCommand:
    """A `:` command: its name, other names, what it does, and its help line."""

    name: str
    aliases: tuple[str, ...]
    handler: Callable[[LineRepl, str], Awaitable[bool]]  # True: leave the REPL
    help: str

    @property
    def names(self) -> tuple[str, ...]:
        return (self.name, *self.aliases)


def _newline(buffer: Buffer) -> None:
    buffer.newline(copy_margin=False)
    buffer.insert_text(indent_for(buffer.document.text_before_cursor))


def discard_typeahead(input: Input) -> None:
    """Forget every key typed before now: what was typed while a snippet ran (or
    pasted with it) was meant for something else, and must not answer a question
    that had not been asked yet."""
    clear_typeahead(input)  # keys prompt-toolkit read but the last prompt did not use
    try:
        fd = input.fileno()
    except (NotImplementedError, OSError, ValueError):
        return
    if os.isatty(fd):
        with suppress(termios.error):
            termios.tcflush(fd, termios.TCIFLUSH)
        return
    # A pipe (tests, a driving program): read off what is already there.
    while select.select([fd], [], [], 0)[0]:
        try:
            if not os.read(fd, 4096):
                return
        except BlockingIOError:
            return


class LineRepl:
    def __init__(self, ws: Workspace, *, input: Input | None, output: Output | None) -> None:
        self.ws = ws
        self.input = input or create_input()
        self.output = output or create_output()
        self.console = Console(self.output, wants_color(self.output))
        self.functions = describe(ws.host)
        self.pager: ValuePager | None = None
        self._cancel: asyncio.Event | None = None
        self._warned = len(ws.warnings)  # the CLI printed the ones from opening the workspace
        self.session: PromptSession[str] = PromptSession(
            PROMPT,
            multiline=True,
            prompt_continuation=CONTINUATION,
            lexer=PygmentsLexer(TypeScriptLexer),
            completer=ReplCompleter(self.functions, COMMAND_HELP),
            complete_while_typing=True,
            auto_suggest=AutoSuggestFromHistory(),
            history=self._history(),
            key_bindings=self._bindings(),
            bottom_toolbar=self._toolbar,
            enable_open_in_editor=True,  # Ctrl-X Ctrl-E: $VISUAL, else $EDITOR
            tempfile_suffix=".ts",  # so the editor highlights the snippet as TypeScript
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
        approved = len(self.ws.session_approvals)
        if approved:
            parts.append(("", f" · auto-approving {approved} path(s)"))
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
            self.console.say("dim", " cancelling…")

    # ------------------------------------------------------------------ loop
    async def loop(self) -> int:
        count = len(self.functions)
        self.console.print(
            [
                line(
                    (
                        "bold",
                        f"run-repl · host {self.ws.host.name} ({count} function{'s' * (count != 1)})",
                    ),
                    (
                        "dim",
                        " · each snippet runs on its own: Ctrl-J for a new line · :help · Ctrl-D quits",
                    ),
                )
            ]
        )
        with self._ctrl_c_cancels():
            while True:
                try:
                    text = await self.session.prompt_async()
                except KeyboardInterrupt:
                    continue  # Ctrl-C at the prompt: the input is gone, the REPL stays
                except EOFError:
                    return ExitCode.OK
                if not text.strip():
                    continue
                try:
                    if text.lstrip().startswith(":"):
                        if await self.command(text.strip()):
                            return ExitCode.OK
                    else:
                        await self.run_snippet(text)
                except Exception as exc:  # a bug or a broken store must not end the session
                    self.console.say("error", f"internal error: {type(exc).__name__}: {exc}")
                    self.console.say("dim", traceback.format_exc().rstrip())

    async def run_snippet(self, source: str) -> None:
        result = await self._execute(partial(self.ws.run, source), previous=None)
        self._show(result, source)
        while result.status == "interrupted":
            decisions = await self._ask(result)
            if decisions is None:
                self._left_pending(result)
                return
            try:
                result = await self._execute(partial(self._resume, decisions), previous=result)
            except (ApprovalConflict, KeyError, ValueError) as exc:
                self.console.say("error", f"cannot resume: {exc}")
                return
            self._show(result, source)

    async def _resume(self, decisions: dict[str, bool], **kwargs: Any) -> RunResult:
        """Decide the run this REPL started and waits for: it resumes here (where its
        logs and calls stream), as `dispatch` resumes a run in the process that started it."""
        done = await self.ws.dispatch(decisions, started_here=True, **kwargs)
        if done.resolution is not None:
            self.ws.warnings.extend(done.resolution.warnings)
        return result_of(done)

    async def _execute(
        self, start: Callable[..., Awaitable[RunResult]], previous: RunResult | None
    ) -> RunResult:
        live = Live(replayed_logs=previous.logs_total if previous is not None else 0)

        def on_log(log: LogLine) -> None:
            live.logs_seen += 1
            if live.logs_seen > live.replayed_logs:
                self.console.question(log_rows(log))  # rows marked, as the question's

        def on_call(call: CallRecord) -> None:
            # A call is shown once, when it ends; one a resume replays was shown before.
            if call.ok is None or call.replayed:
                return
            live.calls_seen += 1
            if live.calls_seen <= LIVE_CALLS:
                self.console.print([[("", "  "), *call_line(call)]])

        self._cancel = cancel = asyncio.Event()
        try:
            result = await start(on_log=on_log, on_call=on_call, cancel=cancel)
        finally:
            self._cancel = None
        if live.calls_seen > LIVE_CALLS:
            self.console.say("dim", f"  … and {live.calls_seen - LIVE_CALLS} more host calls")
        for warning in self.ws.warnings[self._warned :]:  # e.g. the history could not be written
            self.console.say("warn", f"warning: {warning}")
        self._warned = len(self.ws.warnings)
        return result

    def _show(self, result: RunResult, source: str) -> None:
        lines = dropped_logs_lines(result)
        self.pager = ValuePager.of(result)
        if result.status == "ok":
            lines += value_lines(result)
            if self.pager is not None and self.pager.has_more:
                lines.append(self._more_hint(self.pager))
        elif result.status == "error" and result.error is not None:
            lines += error_lines(result.error, source, width=self._columns())
        lines.append(result_status_line(result))
        self.console.print(lines)

    def _columns(self) -> int | None:
        """The terminal's width: the error's excerpt fits it (a wrapped one misplaces its caret)."""
        try:
            return self.output.get_size().columns or None
        except (OSError, ValueError):
            return None

    # ------------------------------------------------------------------ approvals
    async def _ask(self, result: RunResult) -> dict[str, bool] | None:
        """A decision for each of the run's interruptions, or None if the person
        stopped answering (Ctrl-C or Ctrl-D): they stay pending in the store."""
        decisions: dict[str, bool] = {}
        for it in result.interruptions or []:
            self.console.question(interruption_lines(it))
            if it.path in self.ws.session_approvals:
                self.console.print([session_note(it.path)])
                decisions[it.id] = True
                continue
            answer = await self._decision(it.path)
            if answer is None:
                return None
            decisions[it.id] = answer
        return decisions

    async def _decision(self, path: str) -> bool | None:
        """y or n, then Enter; `a` approves the path for the session once it is
        confirmed. Keys typed before the question are never taken as an answer."""
        while True:
            answer = await self._prompt(QUESTION)
            if answer is None:
                return None
            choice = ANSWERS.get(answer.strip().lower())
            if choice == "y":
                return True
            if choice == "n":
                return False
            if choice == "a":
                confirm = await self._prompt(session_question(path))
                if confirm is None:
                    return None
                if confirm.strip().lower() == SESSION_CONFIRM:
                    self.ws.session_approvals.add(path)
                    return True
                self.console.say(
                    "warn", f"  not approved for the session (that needs `{SESSION_CONFIRM}`)"
                )
                continue
            self.console.say("warn", "  answer y, n or a, then Enter (Ctrl-C leaves it pending)")

    async def _prompt(self, question: str) -> str | None:
        discard_typeahead(self.input)
        try:
            return await self.question.prompt_async(question)
        except (KeyboardInterrupt, EOFError):
            return None

    def _left_pending(self, result: RunResult) -> None:
        self.console.print(
            left_pending_lines(self.ws.approve_command(it.id) for it in result.interruptions or [])
        )

    # ------------------------------------------------------------------ commands
    async def command(self, text: str) -> bool:
        """Run a `:` command; True means leave the REPL."""
        name, _, arg = text.partition(" ")
        command = COMMAND_NAMES.get(name)
        if command is None:
            self.console.say("warn", f"unknown command {name}: :help lists them")
            return False
        return await command.handler(self, arg.strip())

    async def _quit(self, arg: str) -> bool:
        return True

    async def _help(self, arg: str) -> bool:
        lines = [
            styled(
                "bold",
                "Type JavaScript or TypeScript: the body of an async function (await and return work).",
            ),
            line(
                "Each snippet runs on its own: nothing carries over, so write several statements as one"
            ),
            line("snippet (Ctrl-J between them) and `return` what you want to see."),
            styled("dim", "commands:"),
        ]
        for c in COMMANDS:
            also = f" ({', '.join(c.aliases)})" if c.aliases else ""
            lines.append(line(f"  {c.name:<10} {c.help}", ("dim", also)))
        lines.append(styled("dim", "keys:"))
        lines += [line(f"  {key:<26} {text}") for key, text in KEYS]
        lines.append(
            styled(
                "dim",
                "approvals: y approves, n denies (then Enter); a approves the path for the rest "
                f"of the session, once you confirm with `{SESSION_CONFIRM}`",
            )
        )
        self.console.print(lines)
        return False

    async def _host(self, arg: str) -> bool:
        self.console.print(function_lines(self.ws.host.name, self.functions, full=False))
        return False

    async def _history_list(self, arg: str) -> bool:
        limit = int(arg) if arg.isdigit() and 0 < int(arg) <= 10_000 else 10
        runs = self.ws.store.list_runs(limit=limit)
        if not runs:
            self.console.say("dim", "no runs yet")
        else:  # oldest first, so the last one sits next to the prompt
            self.console.print(history_lines(list(reversed(runs)), ids=False))
        return False

    async def _clear(self, arg: str) -> bool:
        self.output.erase_screen()
        self.output.cursor_goto(0, 0)
        self.output.flush()
        return False

    async def _more(self, arg: str) -> bool:
        pager = self._current_pager()
        if pager is not None:
            if not pager.has_more:
                self.console.say(
                    "dim",
                    f"that was all of it: {pager.total:,} item{'s' * (pager.total != 1)} "
                    "(:page N or :item N shows one again)",
                )
            else:
                self._show_page(pager, pager.next_offset)
        return False

    async def _page(self, arg: str) -> bool:
        pager = self._current_pager()
        number = self._number(":page", arg)
        if pager is None or number is None:
            return False
        if not 1 <= number <= pager.pages:
            self.console.say(
                "warn", f"no page {number}: pages 1–{pager.pages} of {pager.page_size} items"
            )
        else:
            self._show_page(pager, pager.page_offset(number))
        return False

    async def _item(self, arg: str) -> bool:
        pager = self._current_pager()
        number = self._number(":item", arg)
        if pager is None or number is None:
            return False
        if not 1 <= number <= pager.total:
            self.console.say("warn", f"no item {number}: items 1–{pager.total:,}")
            return False
        next_offset = pager.next_offset
        read = pager.read(self.ws.runner, number - 1, 1)
        pager.next_offset = next_offset  # looking at one item does not move :more
        self.console.print(pager.page_lines(read))
        return False

    # ------------------------------------------------------------------ paging
    def _current_pager(self) -> ValuePager | None:
        if self.pager is None:
            self.console.say("warn", "no current value: run a snippet that returns one")
        return self.pager

    def _number(self, name: str, arg: str) -> int | None:
        if not arg.isdigit():
            self.console.say("warn", f"{name} needs a number: {name} 2")
            return None
        return int(arg)

    def _show_page(self, pager: ValuePager, offset: int) -> None:
        read = pager.read(self.ws.runner, offset)
        lines = pager.page_lines(read)
        if not read.problem and pager.has_more:
            lines.append(self._more_hint(pager))
        self.console.print(lines)

    def _more_hint(self, pager: ValuePager) -> Line:
        rest = pager.total - pager.next_offset
        return styled(
            "dim",
            f"… {rest:,} more from item {pager.next_offset + 1:,}: :more or Ctrl-N for the next "
            f"page, :page N (of {pager.pages}), :item N",
        )


COMMANDS: tuple[ReplCommand, ...] = (
    ReplCommand(":help", (":h", ":?"), LineRepl._help, "commands and keys"),
    ReplCommand(":host", (), LineRepl._host, "the host's functions, with signatures"),
    ReplCommand(":history", (), LineRepl._history_list, "the last runs (:history N)"),
    ReplCommand(":more", (), LineRepl._more, "the next page of the current value"),
    ReplCommand(":page", (), LineRepl._page, "page N of the current value (:page N)"),
    ReplCommand(":item", (), LineRepl._item, "item N of the current value, in full (:item N)"),
    ReplCommand(":clear", (), LineRepl._clear, "clear the screen"),
    ReplCommand(":quit", (":q", ":exit"), LineRepl._quit, "leave (or Ctrl-D)"),
)
COMMAND_NAMES = {name: c for c in COMMANDS for name in c.names}
COMMAND_HELP = {c.name: c.help for c in COMMANDS}
