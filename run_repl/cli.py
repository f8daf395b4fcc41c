"""`run-repl`: the terminal IDE by default, and commands for shells and scripts.

    run-repl [FILE]                 the IDE, FILE opened in the editor
    run-repl run FILE|-             one run: the value on stdout, the rest on stderr
    run-repl expand REF             items of a stored value or log
    run-repl approvals [list|show ID|approve ID|deny ID|recover ID]
    run-repl history                past runs
    run-repl host                   the host's functions, signatures and docs
    run-repl reset-demo             the demo data as first made (undo publishes, refunds)
    run-repl repl                   the line REPL
    run-repl mcp [--http [HOST:]PORT]  the MCP server, for AI agents
    run-repl serve                  resume decided runs of the host, headless

Options common to every command (`--host`, `--data-dir`, `--store`,
`--timeout-ms`, `--memory-mb`) may come before or after the command word. Everything is said
through `run_repl.present`, so it reads as the line REPL and the IDE say it,
and guest-derived text is sanitized on its way to the terminal.
"""

from __future__ import annotations

import argparse
import asyncio
import difflib
import os
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any, NoReturn

from .present import (
    ExitCode,
    approval_detail_lines,
    approval_list_lines,
    expand_lines,
    first_error,
    format_when,
    function_lines,
    history_lines,
    line,
    safe_json,
    styled,
)
from .present.exit_codes import exit_codes_help
from .present.rich_render import TerminalWriter
from .present.shell import Output, SourceError, read_source, source_too_large, write_run
from .sandbox.errors import RunReplError
from .store.store_error import StoreError

MAX_OFFSET = (1 << 63) - 1  # SQLite's largest integer
MAX_HISTORY = 10_000


class UsageError(RunReplError):
    """Bad usage, said in one line; exit status 2."""

    code = "USAGE"


class _Parser(argparse.ArgumentParser):
    """argparse, with its errors as one line that says where help is."""

    def error(self, message: str) -> NoReturn:
        raise UsageError(f"{self.prog}: {message} (see `{self.prog} --help`)")


def whole_number(low: int, high: int) -> Callable[[str], int]:
    """An argparse type: a whole number from `low` to `high`, else a clear error."""

    def parse(text: str) -> int:
        try:
            value = int(text, 10)
        except ValueError:
            raise argparse.ArgumentTypeError(
                f"expected a whole number from {low:,} to {high:,}, got {text!r}"
            ) from None
        if not low <= value <= high:
            raise argparse.ArgumentTypeError(f"{text} is out of range: {low:,} to {high:,}")
        return value

    return parse


def common_options(*, after_command: bool) -> argparse.ArgumentParser:
    """The options every command takes. Given after the command word they must not
    reset what was given before it, so there they have no defaults (SUPPRESS)."""
    parser = argparse.ArgumentParser(add_help=False)
    default: dict[str, Any] = {"default": argparse.SUPPRESS} if after_command else {}
    group = parser.add_argument_group("common options (before or after the command)")
    group.add_argument(
        "--host",
        help="host functions: package.module:attr or a .py file (default: the demo host)",
        **default,
    )
    group.add_argument(
        "--upstream",
        action="append",
        metavar="NAME=COMMAND",
        help="an MCP server whose tools become NAME.* host functions: NAME=COMMAND [ARGS] "
        "(stdio) or NAME=https://... (repeatable; beside --host, or alone)",
        **default,
    )
    group.add_argument(
        "--data-dir",
        help="where the store, history and approvals live (default: the user data dir)",
        **default,
    )
    group.add_argument(
        "--store",
        metavar="URL",
        help="a team's PostgreSQL store, postgresql://USER@HOST/DB (default: RUN_REPL_STORE_URL, "
        "the config's [store] url, else SQLite in the data dir)",
        **default,
    )
    group.add_argument(
        "--timeout-ms",
        type=whole_number(1, MAX_OFFSET),
        help="wall-clock limit of a run, in ms (default 30000)",
        **default,
    )
    group.add_argument(
        "--memory-mb",
        type=whole_number(1, 1 << 20),
        help="sandbox memory limit, in MiB (default 64)",
        **default,
    )
    return parser


# ---------------------------------------------------------------- the commands
@dataclass(frozen=True)
class Command:
    name: str
    help: str
    arguments: Callable[[argparse.ArgumentParser], None]
    handler: Callable[[argparse.Namespace, Output], int]
    description: str = ""


def _run_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("file", help="the snippet file, or - to read stdin")
    p.add_argument(
        "--json", action="store_true", help="print the whole result envelope as JSON on stdout"
    )
    p.add_argument(
        "--window",
        action="store_true",
        help="write only the value's first window (what a terminal shows), with the command "
        "for the rest, even when stdout is a file or a pipe",
    )


def _expand_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("ref", help="a value_ref or logs_ref (res_...)")
    p.add_argument(
        "--offset",
        type=whole_number(0, MAX_OFFSET),
        default=0,
        help="the first item's offset, counted from 0: item 1 is --offset 0 (default 0)",
    )
    p.add_argument(
        "--limit",
        type=whole_number(1, 1000),
        default=100,
        help="how many items, 1-1000 (default 100)",
    )
    p.add_argument("--json", action="store_true", help="print the page as JSON")


def _approvals_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "action",
        nargs="?",
        default="list",
        choices=["list", "show", "approve", "deny", "resume", "recover"],
        help="list (the open ones), show ID, approve ID, deny ID, resume ID (a decided one "
        "nobody resumes: resumes its run here, with this host), recover ID (a stuck one: "
        "ends it without running anything)",
    )
    p.add_argument("id", nargs="?", help="the approval id (int_...)")
    p.add_argument("--all", action="store_true", help="list decided ones too")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.add_argument(
        "--wait",
        action="store_true",
        help="approve/deny: when another process resumes the run (the one that started it, "
        "or a `run-repl serve`), wait for its result and print it",
    )


def _history_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--limit",
        type=whole_number(1, MAX_HISTORY),
        default=20,
        help=f"how many runs, newest first, 1-{MAX_HISTORY:,} (default 20)",
    )
    p.add_argument("--search", help="only runs whose source, status or error code contains this")
    p.add_argument("--json", action="store_true", help="print JSON")


def _host_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--json", action="store_true", help="print JSON")


def _no_arguments(p: argparse.ArgumentParser) -> None:
    pass


def http_address(text: str) -> tuple[str, int]:
    """`--http`'s `[HOST:]PORT`: `8000`, `0.0.0.0:8000`, `[::1]:8000` (host 127.0.0.1 by default)."""
    host, sep, port = text.rpartition(":")
    if not sep:
        host, port = "127.0.0.1", text
    host = host.strip("[]") or "127.0.0.1"
    try:
        number = int(port, 10)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"expected [HOST:]PORT, such as 8000 or 127.0.0.1:8000, got {text!r}"
        ) from None
    if not 0 <= number <= 65535:
        raise argparse.ArgumentTypeError(f"port {number} is out of range: 0 to 65,535")
    return host, number


def seconds(low: float, high: float) -> Callable[[str], float]:
    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected seconds, got {text!r}") from None
        if not low <= value <= high:
            raise argparse.ArgumentTypeError(f"{text} is out of range: {low:g} to {high:g} s")
        return value

    return parse


def _mcp_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--http",
        type=http_address,
        metavar="[HOST:]PORT",
        help="serve streamable HTTP at http://HOST:PORT/mcp (HOST 127.0.0.1 by default; "
        "PORT 0 picks a free one) instead of stdio",
    )
    p.add_argument(
        "--approval-wait",
        type=seconds(0, 24 * 3600),
        default=120.0,
        metavar="SECONDS",
        help="how long a run tool call waits for a person's decision before it returns the "
        "paused run (default 120)",
    )
    p.add_argument(
        "--approve-via",
        choices=["terminal", "client"],
        default="terminal",
        help="who decides approvals: a person in run-repl (terminal, the default), or also "
        "the MCP client's user, asked through elicitation where the client supports it "
        "(client; over --http only a principal [approvals.deciders] names counts)",
    )
    p.add_argument(
        "--tokens-file",
        metavar="PATH",
        help="--http: the bearer tokens, principal = token under [tokens] (default: "
        "mcp-tokens.toml in the config directory; RUN_REPL_MCP_TOKEN adds one)",
    )
    p.add_argument(
        "--add-token",
        metavar="NAME",
        help="make a new bearer token for principal NAME, keep it (as its digest) in the "
        "tokens file, print it once, and exit",
    )
    p.add_argument(
        "--no-auth",
        action="store_true",
        help="--http without credentials: anyone who reaches the port runs snippets and "
        "reads every result (a trusted setup only; said loudly at start)",
    )
    p.add_argument(
        "--allow-host",
        action="append",
        default=[],
        metavar="NAME[:PORT]",
        help="--http: also answer requests whose Host is NAME (a balancer's or proxy's "
        "name); repeatable. Other Hosts get 421",
    )
    p.add_argument(
        "--allow-origin",
        action="append",
        default=[],
        metavar="ORIGIN",
        help="--http: also accept browser requests from ORIGIN (https://app.example); "
        "repeatable. Other Origins get 403",
    )


# ---------------------------------------------------------------- opening a workspace
def _workspace(args: argparse.Namespace, output: Output, *, needs_store: bool = False) -> Any:
    """The workspace of a command. `needs_store`: the command only reads or decides what
    is stored, so a store that could not be opened is its one line (`_stored_only`)."""
    from pydantic import ValidationError

    from .host.loader import HostLoadError
    from .workspace import WorkspaceError, open_workspace

    try:
        ws = open_workspace(
            args.host,
            upstreams=getattr(args, "upstream", None),
            data_dir_override=args.data_dir,
            timeout_ms=args.timeout_ms,
            memory_mb=args.memory_mb,
            store_url=args.store,
        )
    except (HostLoadError, WorkspaceError) as exc:
        raise UsageError(f"run-repl: {exc}") from None
    except ValidationError as exc:
        raise UsageError(f"run-repl: bad limit {first_error(exc)}") from None
    output.seen_warnings = 0
    unsaid = ws.store_warning if needs_store else None  # `_stored_only` says it, in one line
    output.warnings([w for w in ws.warnings if w != unsaid])
    return ws


def _stored_only(ws: Any, output: Output, what: str) -> bool:
    """For commands that only read or decide what is stored: False (said why) when the
    store could not be opened and this process runs on an empty one in memory."""
    if ws.persistent:
        return True
    why = f": {ws.store_problem}" if ws.store_problem is not None else f" ({ws.store.location})."
    output.err.line(
        styled(
            "error",
            f"run-repl: the store could not be opened, so there are no {what} to show or "
            f"decide{why}",
        )
    )
    return False


def _write_run(
    result: Any, source: str | None, ws: Any, output: Output, as_json: bool, window: bool = False
) -> int:
    output.warnings(ws.warnings)  # e.g. the run could not be recorded
    # A person at a terminal reads the first window; a file or a pipe gets the value whole.
    whole = None if window or _is_terminal(output.out.stream) else ws.runner.expand
    return write_run(
        result,
        source,
        output,
        as_json=as_json,
        not_saved=ws.not_saved_reason(result),
        approve_command=ws.approve_command,
        whole=whole,
    )


def _is_terminal(stream: IO[str]) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):  # a closed or stand-in stream
        return False


def _read(name: str, limit: int) -> tuple[str, bool]:
    try:
        return read_source(name, limit)
    except SourceError as exc:
        raise UsageError(f"run-repl: {exc}") from None


# ---------------------------------------------------------------- handlers
def _run(args: argparse.Namespace, output: Output) -> int:
    with _workspace(args, output) as ws:
        limit = ws.runner.limits.max_source_bytes
        source, too_large = _read(args.file, limit)
        if too_large:
            return _write_run(source_too_large(args.file, limit), None, ws, output, args.json)
        result = asyncio.run(ws.run(source))
        return _write_run(result, source, ws, output, args.json, args.window)


def _expand(args: argparse.Namespace, output: Output) -> int:
    from .sandbox.wire.nesting import ValueTooDeep
    from .sandbox.wire.result_store import ResultRefNotFound

    with _workspace(args, output) as ws:
        try:
            page = ws.runner.expand(args.ref, args.offset, args.limit)
        except (ResultRefNotFound, ValueTooDeep) as exc:
            if args.json:
                output.out.text(
                    safe_json(
                        {"code": exc.code, "message": str(exc), "next_actions": exc.next_actions}
                    )
                )
            else:
                output.err.line(styled("error", f"run-repl: {exc.code}: {exc}"))
            return ExitCode.ERROR
        except ValueError as exc:
            raise UsageError(f"run-repl expand: {exc}") from None
    if args.json:
        output.out.text(safe_json(page.model_dump(mode="json")))
    else:
        output.out.lines(expand_lines(page))
    return ExitCode.OK


def _approvals(args: argparse.Namespace, output: Output) -> int:
    from .present.approvals import describe_state
    from .store import ApprovalConflict, StoreError
    from .store.approvals.dispatch import Dispatched, NoExecutor, result_of, stranded
    from .store.approvals.flow import approver_name, recover, resume_decided

    with _workspace(args, output, needs_store=True) as ws:
        if not _stored_only(ws, output, "approvals"):
            return ExitCode.STORE
        if args.action == "list":
            # The open ones: pending, queued, being resumed, and stuck (with how to recover).
            items = ws.store.list_approvals(status=None if args.all else "open")
            nobody = stranded(ws.store, items)  # decided, and no live process resumes them

            def described(a: Any) -> str:
                why = nobody.get(a.id)
                return describe_state(a) + (f"; {why}" if why else "")

            if args.json:
                output.out.text(
                    safe_json(
                        [
                            a.model_dump(mode="json", exclude={"continuation"})
                            | ({"stranded": nobody[a.id]} if a.id in nobody else {})
                            for a in items
                        ]
                    )
                )
            elif not items:
                output.err.line(
                    styled("dim", "no approvals" if args.all else "no pending approvals")
                )
            else:
                output.out.question(approval_list_lines(items, describe=described))
            return ExitCode.OK
        if not args.id:
            raise UsageError(
                f"run-repl approvals {args.action}: needs an approval id (see `run-repl approvals list`)"
            )
        approval = ws.store.get_approval(args.id)
        if approval is None:
            output.err.line(
                styled("error", f"run-repl: no approval {args.id} (see `run-repl approvals list`)")
            )
            return ExitCode.ERROR
        if args.action == "show":
            why = stranded(ws.store, [approval]).get(approval.id)
            if args.json:
                shown = approval.model_dump(mode="json")
                output.out.text(safe_json(shown | ({"stranded": why} if why else {})))
            else:
                output.out.question(
                    approval_detail_lines(approval, when=format_when(approval.created_at))
                )
                if why:
                    output.out.line(line(("warn", "Nobody resumes it: "), why))
            return ExitCode.OK
        if args.action == "recover":
            try:
                ended = recover(ws.store, approval.id)
            except (ApprovalConflict, StoreError) as exc:
                output.err.line(styled("error", f"run-repl: {exc}"))
                return ExitCode.ERROR
            for a in ended:
                output.out.line(line(a.id, "  ", describe_state(a)))
            return ExitCode.OK
        here = approval.host == ws.host.name  # else only a process with its host resumes it
        wrong_host = UsageError(
            f"run-repl: approval {approval.id} belongs to a run on host {approval.host!r}: "
            f"pass --host {approval.host}"
        )
        if args.action == "resume":
            if not here:
                raise wrong_host
            try:  # the decisions recorded on its batch, carried out here (claimed: once)
                resumed = asyncio.run(
                    resume_decided(
                        ws.store,
                        ws.runner,
                        ws.host.functions,
                        approval.id,
                        resumer=approver_name(ws.settings.approvals.name),
                    )
                )
                result = result_of(Dispatched(resumed.approvals, None, resumed))
            except (ApprovalConflict, StoreError) as exc:
                output.err.line(styled("error", f"run-repl: {exc}"))
                return ExitCode.ERROR
            output.warnings(resumed.warnings)
            return _decided_here(args, ws, output, approval, result)

        def queued(q: Any) -> None:
            output.err.line(
                styled(
                    "warn",
                    f"run-repl: {q.held_by or 'another approver'} is resuming this run: your "
                    "decision is recorded and is carried out with it (waiting)...",
                )
            )

        try:
            done = asyncio.run(
                ws.dispatch(
                    {approval.id: args.action == "approve"},
                    on_queued=queued,
                    can_resume_here=here,
                )
            )
            if done.executor is not None:
                return _resumes_elsewhere(args, ws, output, done)
            result = result_of(done)
        except NoExecutor:
            raise wrong_host from None
        except (ApprovalConflict, StoreError) as exc:
            output.err.line(styled("error", f"run-repl: {exc}"))
            return ExitCode.ERROR
        output.warnings(done.resolution.warnings if done.resolution else [])
        return _decided_here(args, ws, output, approval, result)


def _decided_here(
    args: argparse.Namespace, ws: Any, output: Output, approval: Any, result: Any
) -> int:
    """The run this process resumed (or that `--wait` followed): printed as `run` prints."""
    code = _write_run(result, approval.source, ws, output, args.json)
    if args.action == "deny" and _ended_by_denial(result):
        # What was asked is done: the call did not run, and the run ended as a denial ends it.
        output.err.line(
            styled(
                "ok",
                f"denied {approval.id}: {approval.path} did not run, and its run ended "
                "there (RUN_APPROVAL_DENIED, as a denial ends it)",
            )
        )
        return ExitCode.OK
    return code


WAIT_S = 24 * 3600.0  # `--wait`: a bound, far past any resume (its run's timeout and grace)


def _resumes_elsewhere(args: argparse.Namespace, ws: Any, output: Output, done: Any) -> int:
    """The decision is recorded and another process resumes the run: say where (and with
    `--wait`, follow it to its result through the store's change watch)."""
    from .present.approvals import describe_state
    from .store.approvals.dispatch import follow

    first = done.approvals[0]
    executor = done.executor
    if args.json and not args.wait:
        output.out.text(
            safe_json(
                {
                    "approval_id": first.id,
                    "run_id": first.run_id,
                    "decision": first.decision,
                    "state": first.state(),
                    "resumes_on": {
                        "id": executor.id,
                        "label": executor.label,
                        "kind": executor.kind,
                        "host": executor.host,
                    },
                }
            )
        )
    else:
        output.err.line(styled("ok", f"{done.summary()} ({first.id}: {describe_state(first)})"))
    if not args.wait:
        return ExitCode.OK
    result = asyncio.run(
        follow(
            ws.store,
            ws.runner,
            ws.host.functions,
            done,
            timeout_s=WAIT_S,
            here=ws.executor_id,
            can_resume_here=first.host == ws.host.name,  # else its host functions are another's
            on_stranded=lambda why: output.err.line(styled("warn", f"run-repl: {why}")),
        )
    )
    if result is None:
        found = ws.store.get_approval(first.id) or first
        output.err.line(
            styled("warn", f"run-repl: {found.id} is {describe_state(found)}; no run to show")
        )
        return ExitCode.ERROR
    return _decided_here(args, ws, output, first, result)


def _ended_by_denial(result: Any) -> bool:
    error = getattr(result, "error", None)
    return result.status == "error" and error is not None and error.code == "RUN_APPROVAL_DENIED"


def _history(args: argparse.Namespace, output: Output) -> int:
    with _workspace(args, output, needs_store=True) as ws:
        if not _stored_only(ws, output, "past runs"):
            return ExitCode.STORE
        runs = ws.store.list_runs(limit=args.limit, query=args.search)
    if args.json:
        output.out.text(safe_json([r.model_dump(mode="json", exclude={"envelope"}) for r in runs]))
    elif not runs:
        output.err.line(styled("dim", "no runs yet"))
    else:
        output.out.lines(history_lines(runs))
    return ExitCode.OK


def _host(args: argparse.Namespace, output: Output) -> int:
    from .host.loader import describe

    with _workspace(args, output) as ws:
        functions = describe(ws.host)
        name = ws.host.name
    if args.json:
        output.out.text(safe_json({"host": name, "functions": [f.to_json() for f in functions]}))
    else:
        output.out.lines(function_lines(name, functions))
    return ExitCode.OK


def _reset_demo(args: argparse.Namespace, output: Output) -> int:
    from .host.demo import reset_demo

    with _workspace(args, output) as ws:
        if not ws.host.is_demo:
            raise UsageError(
                f"run-repl reset-demo: resets the demo host's data, and this is host "
                f"{ws.host.name!r}: leave out --host (and the config's host) to reset the demo"
            )
        try:
            path = reset_demo(ws.data_dir)
        except OSError as exc:
            output.err.line(
                styled("error", f"run-repl: the demo data was not reset: {exc}. Nothing changed.")
            )
            return ExitCode.ERROR
    output.out.line(
        line(
            f"the demo data is as first made again: {path} (every draft unpublished, every "
            "order as it was; history and approvals kept)"
        )
    )
    return ExitCode.OK


def _repl(args: argparse.Namespace, output: Output) -> int:
    from .line.repl import run_line_repl

    with _workspace(args, output) as ws:
        return asyncio.run(run_line_repl(ws))


def _mcp(args: argparse.Namespace, output: Output) -> int:
    from .mcp.run_command import serve_command

    with _workspace(args, output) as ws:
        return serve_command(ws, args, output)


def _serve_arguments(p: argparse.ArgumentParser) -> None:
    from .serve import serve_arguments

    serve_arguments(p)


def _serve(args: argparse.Namespace, output: Output) -> int:
    from .serve import serve_command

    with _workspace(args, output, needs_store=True) as ws:
        return serve_command(ws, args, output)


def _tui(args: argparse.Namespace, output: Output) -> int:
    if not sys.stdout.isatty() or not sys.stdin.isatty():
        raise UsageError(
            "run-repl: the IDE needs a terminal. Use `run-repl run FILE` (or `-` for stdin) "
            "to run a snippet, or `run-repl --help`."
        )
    with _workspace(args, output) as ws:
        source: str | None = None
        if args.file is not None:
            source = ""  # a file that does not exist yet opens empty; saving creates it
            if os.path.exists(args.file):
                limit = ws.runner.limits.max_source_bytes
                source, too_large = _read(args.file, limit)
                if too_large:
                    raise UsageError(
                        f"run-repl: {args.file} is over max_source_bytes ({limit:,} bytes)"
                    )
        from .tui.app import run_app

        return run_app(ws, file=args.file, source=source)


COMMANDS: dict[str, Command] = {
    c.name: c
    for c in (
        Command(
            "run",
            "run a snippet once",
            _run_arguments,
            _run,
            "Run a snippet (a file, or - for stdin) once. The value goes to stdout as JSON: "
            "whole into a file or a pipe (a big one streamed from the store, one item a "
            "line), as far as its first window goes on a terminal or with --window (`expand` "
            "pages the rest); logs, calls, errors, approvals and the status line go to "
            "stderr, so `run-repl run f.ts > out.json` keeps the value. With --json, stdout "
            "gets the result envelope (its value_ref pages the rest).",
        ),
        Command(
            "expand",
            "page through a stored value or log",
            _expand_arguments,
            _expand,
            "Items of a stored value or log. Items are numbered from 1 in the text; "
            "--offset counts from 0 (item 1 is --offset 0).",
        ),
        Command(
            "approvals",
            "pending approvals: list, show, approve, deny",
            _approvals_arguments,
            _approvals,
            "Pending approvals: list them, show one whole, approve or deny one (its run resumes).",
        ),
        Command("history", "past runs, newest first", _history_arguments, _history),
        Command("host", "the host's functions, with signatures and docs", _host_arguments, _host),
        Command(
            "reset-demo",
            "put the demo data back as first made (undo publishes and refunds)",
            _no_arguments,
            _reset_demo,
            "Put the demo host's data back as it was first made: every draft unpublished, "
            "every order as it was, so the publish and refund examples run again. Only "
            "demo.sqlite3 in the data directory changes; history and approvals are kept.",
        ),
        Command("repl", "the line REPL (prompt-toolkit)", _no_arguments, _repl),
        Command(
            "mcp",
            "the MCP server: AI agents run snippets, a person approves",
            _mcp_arguments,
            _mcp,
            "Serve the Model Context Protocol over stdio (or streamable HTTP with --http): "
            "tools run, expand_result, docs and approval_status on this host, with the same "
            "store, history and approvals as the other commands. A run that needs a person's "
            "approval waits --approval-wait seconds for a decision (`run-repl approvals "
            "approve ID`, the IDE, the line REPL) and returns the final result. Nothing but "
            "the protocol is written to stdout.",
        ),
        Command(
            "serve",
            "resume decided runs of this host, headless (for a team's machines)",
            _serve_arguments,
            _serve,
            "Resume runs whose approvals are decided anywhere (`run-repl approvals approve`, "
            "the IDE), here, where this host's code, credentials and network are: a decision "
            "names this process and returns at once. One line on stdout per resume. SIGTERM "
            "or Ctrl-C stops taking new work and lets resumes in progress end; a second one "
            "interrupts them.",
        ),
    )
}


# ---------------------------------------------------------------- parsing
def build_parser() -> _Parser:
    """`run-repl [options] [COMMAND | FILE] ...`: the command word (or a file for
    the IDE) and everything after it go to the command's own parser."""
    commands = "\n".join(f"  {c.name:<10} {c.help}" for c in COMMANDS.values())
    parser = _Parser(
        prog="run-repl",
        usage="run-repl [options] [COMMAND [ARGS] | FILE]",
        description=(
            "Run JavaScript and TypeScript against your own Python functions, in a QuickJS\n"
            "sandbox. With no command, the IDE opens (FILE in its editor)."
        ),
        epilog=(
            f"commands:\n{commands}\n\n`run-repl COMMAND --help` for each. To open a file named\n"
            f"like a command, write its path: `run-repl ./history`.\n\nexit status:\n"
            f"{exit_codes_help()}"
        ),
        formatter_class=argparse.RawDescriptionHelpFormatter,
        parents=[common_options(after_command=False)],
    )
    parser.add_argument("word", nargs="?", metavar="COMMAND | FILE", help=argparse.SUPPRESS)
    parser.add_argument("rest", nargs=argparse.REMAINDER, help=argparse.SUPPRESS)
    return parser


def command_parser(command: Command) -> _Parser:
    parser = _Parser(
        prog=f"run-repl {command.name}",
        description=command.description or command.help,
        parents=[common_options(after_command=True)],
    )
    command.arguments(parser)
    return parser


def _ide_parser() -> _Parser:
    return _Parser(prog="run-repl", parents=[common_options(after_command=True)])


def looks_like_a_file(word: str) -> bool:
    """A word the IDE may open though it does not exist yet: a path or a name with a dot."""
    return "/" in word or os.sep in word or "." in Path(word).name


def parse(
    argv: Sequence[str],
) -> tuple[argparse.Namespace, Callable[[argparse.Namespace, Output], int]]:
    args = build_parser().parse_args(list(argv))
    word, rest = args.word, args.rest
    del args.word, args.rest
    if word in COMMANDS:
        command = COMMANDS[word]
        return command_parser(command).parse_args(rest, namespace=args), command.handler
    if word is not None and not os.path.exists(word) and not looks_like_a_file(word):
        close = difflib.get_close_matches(word, list(COMMANDS), n=1, cutoff=0.6)
        hint = f": did you mean {close[0]}?" if close else f" (commands: {', '.join(COMMANDS)})"
        raise UsageError(f"run-repl: {word!r} is not a command or a file{hint}")
    args.file = word
    return _ide_parser().parse_args(rest, namespace=args), _tui


# ---------------------------------------------------------------- main
def _tolerant(stream: IO[str]) -> None:
    """A character the terminal's encoding lacks is written as an escape, never a crash."""
    reconfigure = getattr(stream, "reconfigure", None)
    if reconfigure is not None:
        try:
            reconfigure(errors="backslashreplace")
        except (ValueError, OSError):
            pass


def _quiet_broken_pipe() -> None:
    """The reader went away (`run-repl history | head`): stop writing, say nothing.
    Later writes (and the flush at exit) go to /dev/null instead of raising."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError, AttributeError):
        pass


def main(argv: Sequence[str] | None = None) -> int:
    """The `run-repl` command; returns its exit status (see `run-repl --help`)."""
    _tolerant(sys.stdout)
    _tolerant(sys.stderr)
    output = Output(TerminalWriter(sys.stdout), TerminalWriter(sys.stderr))
    try:
        try:
            args, handler = parse(sys.argv[1:] if argv is None else argv)
        except SystemExit as exc:  # --help
            return int(exc.code or 0)
        return int(handler(args, output))
    except UsageError as exc:
        output.err.line(styled("error", str(exc)))
        return ExitCode.USAGE
    except KeyboardInterrupt:
        return ExitCode.CANCELLED
    except BrokenPipeError:
        _quiet_broken_pipe()
        return ExitCode.BROKEN_PIPE
    except StoreError as exc:  # the store failed after it opened (damaged, a server gone, full)
        output.err.line(styled("error", f"run-repl: {exc}"))
        return ExitCode.STORE


if __name__ == "__main__":
    raise SystemExit(main())
