"""`run-repl`: the terminal IDE by default, and commands for shells and scripts.

    run-repl [FILE]                 the IDE, FILE opened in the editor
    run-repl run FILE|-             one run: text, or the JSON envelope with --json
    run-repl expand REF             the next items of a stored value or log
    run-repl approvals [list|show ID|approve ID|deny ID|recover ID]
    run-repl history                past runs
    run-repl host                   the host's functions, signatures and docs
    run-repl repl                   the line REPL

Exit codes: 0 ok, 1 the run failed, 2 bad usage (or a bad --host), 3 interrupted
(the pending approval is saved; its id is printed).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
from collections.abc import Sequence
from typing import Any

EXIT_OK, EXIT_ERROR, EXIT_USAGE, EXIT_INTERRUPTED = 0, 1, 2, 3
COMMANDS = ("run", "expand", "approvals", "history", "host", "repl")


def _common(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--host", help="host functions: package.module:attr or a .py file (default: the demo host)"
    )
    parser.add_argument(
        "--data-dir",
        help="where the store, history and approvals live (default: the user data dir)",
    )
    parser.add_argument(
        "--timeout-ms", type=int, help="wall-clock limit of a run, in ms (default 30000)"
    )
    parser.add_argument("--memory-mb", type=int, help="sandbox memory limit, in MiB (default 64)")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="run-repl",
        description="Run JavaScript and TypeScript against your own Python functions, in a QuickJS sandbox.",
        epilog="Commands: " + ", ".join(COMMANDS) + ". `run-repl COMMAND --help` for each.",
    )
    _common(parser)
    parser.add_argument("file", nargs="?", help="a snippet to open in the editor")
    return parser


def build_command_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="run-repl")
    sub = parser.add_subparsers(dest="command", required=True)

    run = sub.add_parser(
        "run", help="run a snippet once", description="Run a snippet (a file, or - for stdin) once."
    )
    run.add_argument("file", help="the snippet file, or - to read stdin")
    run.add_argument("--json", action="store_true", help="print the result envelope as JSON")
    _common(run)

    expand = sub.add_parser(
        "expand",
        help="page through a stored value or log",
        description="Items of a stored value or log, by item.",
    )
    expand.add_argument("ref", help="a value_ref or logs_ref (res_...)")
    expand.add_argument("--offset", type=int, default=0, help="first item (default 0)")
    expand.add_argument(
        "--limit", type=int, default=100, help="how many items, 1-1000 (default 100)"
    )
    expand.add_argument("--json", action="store_true", help="print the page as JSON")
    _common(expand)

    approvals = sub.add_parser(
        "approvals", help="pending approvals: list, show, approve, deny, recover (a stuck one)"
    )
    approvals.add_argument(
        "action",
        nargs="?",
        default="list",
        choices=["list", "show", "approve", "deny", "recover"],
    )
    approvals.add_argument("id", nargs="?", help="the approval id (int_...)")
    approvals.add_argument("--all", action="store_true", help="list decided ones too")
    approvals.add_argument("--json", action="store_true", help="print JSON")
    _common(approvals)

    history = sub.add_parser("history", help="past runs")
    history.add_argument("--limit", type=int, default=20)
    history.add_argument(
        "--search", help="only runs whose source, status or error code contains this"
    )
    history.add_argument("--json", action="store_true")
    _common(history)

    host = sub.add_parser("host", help="the host's functions, with signatures and docs")
    host.add_argument("--json", action="store_true")
    _common(host)

    repl = sub.add_parser("repl", help="the line REPL (prompt-toolkit)")
    _common(repl)
    return parser


_VALUED = ("--host", "--data-dir", "--timeout-ms", "--memory-mb")


def _command_index(args: list[str]) -> int | None:
    """Where the command word is, skipping common options and their values."""
    i = 0
    while i < len(args):
        arg = args[i]
        if arg in _VALUED:
            i += 2
            continue
        if arg.startswith("-"):
            i += 1
            continue
        return i if arg in COMMANDS else None
    return None


def main(argv: Sequence[str] | None = None) -> int:
    args_list = list(sys.argv[1:] if argv is None else argv)
    command_at = _command_index(args_list)
    if command_at is not None:
        # Common options may come before the command too: `run-repl --host x run f.ts`.
        args_list = [args_list[command_at], *args_list[:command_at], *args_list[command_at + 1 :]]
        args = build_command_parser().parse_args(args_list)
    else:
        args = build_parser().parse_args(args_list)
        args.command = None
    try:
        return _dispatch(args)
    except KeyboardInterrupt:
        return 130


def _workspace(args: argparse.Namespace) -> Any:
    from pydantic import ValidationError

    from .host.loader import HostLoadError
    from .workspace import open_workspace

    try:
        ws = open_workspace(
            args.host,
            data_dir_override=args.data_dir,
            timeout_ms=args.timeout_ms,
            memory_mb=args.memory_mb,
        )
    except HostLoadError as exc:
        print(f"run-repl: {exc}", file=sys.stderr)
        raise SystemExit(EXIT_USAGE) from None
    except ValidationError as exc:
        first = exc.errors()[0]
        print(
            f"run-repl: bad limit {'.'.join(map(str, first['loc']))}: {first['msg']}",
            file=sys.stderr,
        )
        raise SystemExit(EXIT_USAGE) from None
    for warning in ws.warnings:
        print(f"run-repl: warning: {warning}", file=sys.stderr)
    return ws


def _dispatch(args: argparse.Namespace) -> int:
    if args.command is None:
        return _tui(args)
    handler = {
        "run": _run,
        "expand": _expand,
        "approvals": _approvals,
        "history": _history,
        "host": _host,
        "repl": _repl,
    }[args.command]
    return handler(args)


def _exit_code(status: str) -> int:
    return {"ok": EXIT_OK, "error": EXIT_ERROR, "interrupted": EXIT_INTERRUPTED}[status]


def _print_result(result: Any, source: str, as_json: bool) -> None:
    from .result_text import write_result

    if as_json:
        print(json.dumps(result.model_dump(mode="json"), indent=2, ensure_ascii=False))
    else:
        write_result(result, source=source)
        if result.status == "interrupted":
            for it in result.interruptions or []:
                print(
                    f"saved pending approval {it.id}: run-repl approvals approve {it.id}  (or deny)"
                )


def _read_source(name: str) -> str:
    if name == "-":
        return sys.stdin.read()
    try:
        with open(name, encoding="utf-8") as fh:
            return fh.read()
    except OSError as exc:
        print(f"run-repl: cannot read {name}: {exc.strerror or exc}", file=sys.stderr)
        raise SystemExit(EXIT_USAGE) from None
    except UnicodeDecodeError:
        print(f"run-repl: {name} is not UTF-8 text", file=sys.stderr)
        raise SystemExit(EXIT_USAGE) from None


def _run(args: argparse.Namespace) -> int:
    source = _read_source(args.file)
    ws = _workspace(args)
    try:
        result = asyncio.run(ws.run(source))
    finally:
        ws.close()
    _print_result(result, source, args.json)
    return _exit_code(result.status)


def _expand(args: argparse.Namespace) -> int:
    from .sandbox.result_store import ResultRefNotFound

    ws = _workspace(args)
    try:
        page = ws.runner.expand(args.ref, args.offset, args.limit)
    except ResultRefNotFound as exc:
        if args.json:
            print(
                json.dumps(
                    {"code": exc.code, "message": str(exc), "next_actions": exc.next_actions}
                )
            )
        else:
            print(f"run-repl: {exc.code}: {exc}", file=sys.stderr)
        return EXIT_ERROR
    except ValueError as exc:
        print(f"run-repl: {exc}", file=sys.stderr)
        return EXIT_USAGE
    if args.json:
        print(json.dumps(page.model_dump(mode="json"), indent=2, ensure_ascii=False))
        return EXIT_OK
    end = page.offset + len(page.items)
    print(
        f"{page.path}: items {page.offset + 1:,}–{end:,} of {page.total:,}"
        if page.items
        else f"{page.path}: no items at offset {page.offset:,} (total {page.total:,})"
    )
    for item in page.items:
        print(json.dumps(item, indent=2, ensure_ascii=False, default=str))
    if page.has_more:
        print(f"… next: run-repl expand {page.ref} --offset {end}")
    return EXIT_OK


def _approvals(args: argparse.Namespace) -> int:
    from .store import ApprovalConflict, StoreError
    from .store.approval_flow import describe_state, recover

    ws = _workspace(args)
    try:
        if args.action == "list":
            # Open ones: pending, queued, being resumed, and stuck (with how to recover them).
            items = ws.store.list_approvals(status=None if args.all else "open")
            if args.json:
                print(
                    json.dumps(
                        [a.model_dump(mode="json", exclude={"continuation"}) for a in items],
                        indent=2,
                    )
                )
            elif not items:
                print("no pending approvals" if not args.all else "no approvals")
            else:
                for a in items:
                    print(f"{a.id}  {a.state():<9} {a.path}{_args_text(a.args)}  — {a.message}")
                    if a.state() not in ("pending", "approved", "denied"):
                        print(f"    {describe_state(a)}")
            return EXIT_OK
        if not args.id:
            print(
                f"run-repl: approvals {args.action} needs an approval id (see `run-repl approvals list`)",
                file=sys.stderr,
            )
            return EXIT_USAGE
        approval = ws.store.get_approval(args.id)
        if approval is None:
            print(
                f"run-repl: no approval {args.id} (see `run-repl approvals list`)", file=sys.stderr
            )
            return EXIT_ERROR
        if args.action == "show":
            if args.json:
                print(json.dumps(approval.model_dump(mode="json"), indent=2))
            else:
                print(
                    f"{approval.id}  {approval.status}\n  {approval.message}\n  call: {approval.path}{_args_text(approval.args)}"
                )
                print(f"  payload: {json.dumps(approval.payload, ensure_ascii=False)}\n  snippet:")
                print("\n".join("    " + line for line in approval.source.splitlines()))
            return EXIT_OK
        if args.action == "recover":
            try:
                ended = recover(ws.store, approval.id)
            except (ApprovalConflict, StoreError) as exc:
                print(f"run-repl: {exc}", file=sys.stderr)
                return EXIT_ERROR
            for a in ended:
                print(f"{a.id}  {describe_state(a)}")
            return EXIT_OK
        if approval.host != ws.host.name:
            print(
                f"run-repl: approval {approval.id} belongs to a run on host {approval.host!r}: pass --host {approval.host}",
                file=sys.stderr,
            )
            return EXIT_USAGE
        decision = args.action == "approve"
        problems: list[str] = []

        def queued(q: Any) -> None:
            print(
                f"run-repl: {q.held_by or 'another approver'} is resuming this run: your decision "
                "is recorded and is carried out with it (waiting)...",
                file=sys.stderr,
            )

        try:
            result = asyncio.run(
                ws.decide({approval.id: decision}, warnings=problems, on_queued=queued)
            )
        except (ApprovalConflict, StoreError) as exc:
            print(f"run-repl: {exc}", file=sys.stderr)
            return EXIT_ERROR
        for problem in problems:
            print(f"run-repl: warning: {problem}", file=sys.stderr)
        _print_result(result, approval.source, args.json)
        return _exit_code(result.status)
    finally:
        ws.close()


def _args_text(args: Any) -> str:
    if isinstance(args, list):
        return "(" + ", ".join(json.dumps(a, ensure_ascii=False, default=str) for a in args) + ")"
    return "(…)"


def _history(args: argparse.Namespace) -> int:
    import datetime as dt

    ws = _workspace(args)
    runs = ws.store.list_runs(limit=args.limit, query=args.search)
    if args.json:
        print(json.dumps([r.model_dump(mode="json", exclude={"envelope"}) for r in runs], indent=2))
        return EXIT_OK
    if not runs:
        print("no runs yet")
    for r in runs:
        when = dt.datetime.fromtimestamp(r.started_at).strftime("%Y-%m-%d %H:%M:%S")
        code = f" {r.error_code}" if r.error_code else ""
        print(f"{when}  {r.id}  {r.status:<11}{code}  {r.duration_ms:7.1f} ms  {r.title}")
    return EXIT_OK


def _host(args: argparse.Namespace) -> int:
    from .host.loader import describe

    ws = _workspace(args)
    items = describe(ws.host)
    if args.json:
        print(json.dumps({"host": ws.host.name, "functions": items}, indent=2))
        return EXIT_OK
    print(f"host: {ws.host.name}")
    for item in items:
        flags = " (async)" if item["async"] else ""
        flags += " (needs approval)" if item["needs_approval"] else ""
        print(f"\n  {item['signature']}{flags}")
        print(f"      python: {item['python_signature']}")
        for line in (item["doc"] or "").splitlines():
            print(f"      {line}")
    return EXIT_OK


def _repl(args: argparse.Namespace) -> int:
    ws = _workspace(args)
    try:
        from .line.repl import run_line_repl

        return asyncio.run(run_line_repl(ws))
    finally:
        ws.close()


def _tui(args: argparse.Namespace) -> int:
    if not sys.stdout.isatty() or not sys.stdin.isatty():
        print(
            "run-repl: the IDE needs a terminal. Use `run-repl run FILE` (or `-` for stdin) to run a snippet, "
            "or `run-repl --help`.",
            file=sys.stderr,
        )
        return EXIT_USAGE
    # A file that does not exist yet opens empty; saving creates it.
    source = (
        _read_source(args.file)
        if args.file and os.path.exists(args.file)
        else ("" if args.file else None)
    )
    ws = _workspace(args)
    try:
        from .tui.app import run_app

        return run_app(ws, file=args.file, source=source)
    finally:
        ws.close()


if __name__ == "__main__":
    raise SystemExit(main())
