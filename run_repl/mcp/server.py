"""`run-repl mcp`: the Model Context Protocol server, over stdio or streamable HTTP.

    server = RunReplMcp(workspace, McpOptions(approval_wait_s=120))
    await serve_stdio(server)            # or serve_http(server, "127.0.0.1", 8000)

Built on the `mcp` SDK's low-level `Server`, so the tools' schemas, their
results and their errors are exactly what `tools.py` and `replies.py` say.
Every run goes through the workspace's runner and store, as the CLI's do: it
is in `history`, its approvals are in `approvals`, its values page with
`expand`. A tool call whose client goes away (a cancel, a closed stdin, a
dropped connection) cancels its run.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import gc
import json
import logging
import socket
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from typing import Any, Literal

import anyio
import mcp_types as types
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel.server import Server
from mcp.shared.exceptions import MCPError

from .. import __version__
from ..host.loader import describe
from ..sandbox.approval import ApprovalPolicy
from ..sandbox.errors import ResultRefNotFound
from ..sandbox.limits import Limits
from ..sandbox.result import RunResult
from ..sandbox.wire.nesting import ValueTooDeep
from ..sandbox.wire.result_store import MAX_PAGE
from ..sandbox.wire.value_window import BUDGET_LINES, leading_items
from ..store.approvals.resumer import Resumer
from ..workspace import Workspace
from . import guide
from .approval_wait import (
    ApprovalWatch,
    Standing,
    standing,
    standing_of_approvals,
    standing_of_run,
    wait_for_decision,
    waiting_message,
)
from .client_approval import ClientApprovals, can_ask
from .declarations import declarations
from .http_auth import BearerAuth, TokenTable, principal_of
from .http_guard import BodyLimit, HostOriginGuard, HttpLimits, guarded_protocol
from .idempotency import Reservation, reserve, run_of
from .recent_owners import RecentOwners
from .replies import (
    docs_reply,
    error_reply,
    not_saved_words,
    page_reply,
    paused_words,
    run_reply,
    status_reply,
    wire_safe,
)
from .tool_errors import (
    INTERNAL_ERROR,
    RESULT_OFFSET_OUT_OF_RANGE,
    TOOL_UNKNOWN,
    ToolError,
    closest,
    edit,
)
from .tools import (
    APPROVAL_STATUS,
    DOCS,
    EXPAND,
    RUN,
    ToolSettings,
    parse_docs,
    parse_expand,
    parse_run,
    parse_status,
    tool_list,
)

log = logging.getLogger("run_repl.mcp")
# The run this tool call made, once it made one (each call runs in a task of its own).
_call_run: contextvars.ContextVar[str | None] = contextvars.ContextVar("call_run", default=None)

DTS_URI = "run-repl://host.d.ts"
GUIDE_URI = "run-repl://guide"
TASK_PROMPT = "run-repl-task"
RESOURCE_NOT_FOUND = -32002  # the MCP spec's code for resources/read of an unknown URI
CANCEL_GRACE_S = 10.0  # a cancelled run stops in milliseconds; this bounds a stuck one
HEARTBEAT_S = 5.0  # progress while a call waits for a person, even when nothing changes
RESUMING_GRACE_S = 120.0  # past the longest run: a decided run resuming is followed to its end


def _tracing() -> bool:
    """Whether an OpenTelemetry tracer provider is set (by the person's instrumentation:
    run-repl sets none), so the SDK's per-request spans go somewhere."""
    from opentelemetry import trace

    return not isinstance(trace.get_tracer_provider(), trace.ProxyTracerProvider)


@dataclass(frozen=True)
class McpOptions:
    """The server's settings (the `run-repl mcp` options).

    `authenticated`: every call comes with a principal (HTTP with tokens), and sees
    only its own runs, results and approvals; a call without one is refused.
    `transport`: how clients reach it; over HTTP a client's answer to an approval
    question counts only from a principal the approvals policy names."""

    approval_wait_s: float = 120.0
    default_timeout_s: float = 60.0
    max_timeout_s: float = 300.0
    approve_via: Literal["terminal", "client"] = "terminal"
    authenticated: bool = False
    transport: Literal["stdio", "http"] = "stdio"


class RunReplMcp:
    """The tools, resources and prompt over one workspace (its host, runner and store)."""

    def __init__(self, ws: Workspace, options: McpOptions | None = None) -> None:
        self.ws = ws
        self.options = options or McpOptions()
        self.settings = ToolSettings(
            default_timeout_s=self.options.default_timeout_s,
            max_timeout_s=self.options.max_timeout_s,
            max_source_bytes=ws.runner.limits.max_source_bytes,
            approval_wait_s=self.options.approval_wait_s,
            max_runs_in_flight=ws.runner.max_runs_in_flight,
        )
        self.watch = ApprovalWatch(ws.store)
        self._owners = RecentOwners()  # whose the runs made here are, for expand_result
        self._resumer: Resumer | None = None
        self._resumer_stop = asyncio.Event()
        self._resumer_task: asyncio.Task[None] | None = None
        self._said: set[str] = set()
        self._warned = len(ws.warnings)  # said already, by the command that opened ws
        self._manifest: Any = None
        self._follow_host()
        self._tools = tool_list(self.settings, guide.namespaces_text(self.namespaces))
        self._header_schemas = {
            t.name: t.input_schema
            for t in self._tools
            if "x-mcp-header" in json.dumps(t.input_schema)
        }

    def _follow_host(self) -> None:
        """The docs as the host is now: an upstream whose tool list changed has a new
        manifest, and its declarations follow it."""
        manifest = self.ws.host.manifest
        if manifest is self._manifest:
            return
        self.namespaces = list(manifest.tree)
        decorated = [p for p, f in manifest.functions.items() if f.approval is not None]
        self._policy = ApprovalPolicy.build(self.ws.runner.approvals, decorated)
        self._declarations_now = declarations(self.ws.host, self.approval_mode)
        self._manifest = manifest

    @property
    def _declarations(self) -> str:
        self._follow_host()
        return self._declarations_now[0]

    @property
    def _declared(self) -> list[Any]:
        self._follow_host()
        return self._declarations_now[1]

    def approval_mode(self, path: str) -> str:
        return self._policy.mode(path) if self._policy is not None else "allow"

    # ------------------------------------------------------------------ the SDK server
    def build(self) -> Server[Any]:
        server: Server[Any] = Server(
            "run-repl",
            version=__version__,
            title="run-repl",
            description="Run JavaScript/TypeScript snippets against a host's Python functions, "
            "in a QuickJS sandbox; a person approves sensitive calls in run-repl.",
            instructions=guide.instructions(
                self.ws.host.name, self.namespaces, self.options.approval_wait_s
            ),
            # The tools are the same for every caller: without this lookup the SDK runs a
            # whole tools/list (dispatch, four schemas serialized) inside every 2026-07-28
            # tools/call over HTTP, to check its Mcp-Param headers.
            get_tool_input_schema=self.tool_input_schema,
            on_list_tools=self.list_tools,
            on_call_tool=self.call_tool,
            on_list_resources=self.list_resources,
            on_read_resource=self.read_resource,
            on_list_prompts=self.list_prompts,
            on_get_prompt=self.get_prompt,
        )
        if not _tracing():
            # A span per request that nothing records: about 0.1 ms of CPU each.
            server.middleware = [
                m for m in server.middleware if type(m).__name__ != "OpenTelemetryMiddleware"
            ]
        return server

    def tool_input_schema(self, name: str) -> dict[str, Any] | None:
        """Tool `name`'s input schema when it declares `Mcp-Param-*` headers (x-mcp-header),
        which the SDK then checks against the call's arguments; None: nothing to check
        (no such tool, or one that declares none, as run-repl's do)."""
        return self._header_schemas.get(name)

    async def list_tools(
        self, ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        return types.ListToolsResult(tools=self._tools)

    def principal(self, ctx: ServerRequestContext[Any]) -> str | None:
        """Who makes this call: the authenticated principal (HTTP with tokens), else None
        (stdio: the person's own app; --no-auth: a setup they trust)."""
        name = principal_of(ctx.request)
        if name is None and self.options.authenticated:
            # The HTTP layer lets nothing through without a principal; never serve one.
            raise ToolError(
                "UNAUTHENTICATED",
                "This call carries no credentials.",
                {"type": "retry", "why": "Send `Authorization: Bearer TOKEN` with the call."},
            )
        return name

    async def call_tool(
        self, ctx: ServerRequestContext[Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        """Every call gets an answer: a handler's failure is a tool error naming the run
        it made, and a reply that could not be written (a lone surrogate) is escaped."""
        arguments = params.arguments or {}
        _call_run.set(None)
        try:
            principal = self.principal(ctx)
            result = await self._dispatch(ctx, params.name, arguments, principal)
        except ToolError as exc:
            result = error_reply(exc, _call_run.get())
        except Exception as exc:  # a bug: the model gets a tool error, the log the traceback
            log.exception("tool %s failed", params.name)
            result = self._internal_error(params.name, exc)
        return self._deliverable(params.name, result)

    async def _dispatch(
        self,
        ctx: ServerRequestContext[Any],
        name: str,
        arguments: dict[str, Any],
        principal: str | None,
    ) -> types.CallToolResult:
        if name == RUN:
            return await self.run(ctx, arguments, principal)
        if name == EXPAND:
            return await self.expand(arguments, principal)
        if name == DOCS:
            return self.docs(arguments)
        if name == APPROVAL_STATUS:
            return await self.approval_status(ctx, arguments, principal)
        names = [t.name for t in self._tools]
        close = closest(name, names)
        raise ToolError(
            TOOL_UNKNOWN,
            f"run-repl has no tool {name!r}" + (f": did you mean {close}?" if close else "."),
            edit(f"Call one of {', '.join(names)}.", tool=close or RUN),
        )

    def _internal_error(self, tool: str, exc: BaseException) -> types.CallToolResult:
        run_id = _call_run.get()
        what = f"run-repl failed inside the {tool} tool ({type(exc).__name__}: {exc})"
        if run_id is None:
            return error_reply(
                ToolError(
                    INTERNAL_ERROR,
                    f"{what}; this is a bug in run-repl, not in your call.",
                    {"type": "retry", "why": "Try again; if it keeps failing, tell the person."},
                )
            )
        # The run ran (its calls happened): running it again could do them twice.
        return error_reply(
            ToolError(
                INTERNAL_ERROR,
                f"{what} after the run {run_id} ran; it is in run-repl's history. This is a "
                "bug in run-repl, not in your call.",
                {
                    "type": "run_cli_command",
                    "command": "run-repl history",
                    "why": f"The snippet did run as {run_id}: check its result in the history "
                    "before running it again.",
                },
            ),
            run_id,
        )

    def _deliverable(self, tool: str, result: types.CallToolResult) -> types.CallToolResult:
        """`result` as it can be written on the wire (over stdio, a reply that cannot
        be encoded used to end the server): a lone surrogate, which JavaScript strings
        may hold and UTF-8 cannot, becomes its visible `\\uXXXX` escape."""
        try:
            result.model_dump_json(by_alias=True, exclude_unset=True)
            return result
        except Exception:
            pass
        escaped = wire_safe(result)  # only for a reply that needs it: it walks the whole
        try:
            escaped.model_dump_json(by_alias=True, exclude_unset=True)
            return escaped
        except Exception as exc:
            failure = exc
        log.error("tool %s: its reply cannot be written (%s)", tool, failure)
        return wire_safe(self._internal_error(tool, failure))

    # ------------------------------------------------------------------ run
    async def run(
        self, ctx: ServerRequestContext[Any], arguments: dict[str, Any], principal: str | None
    ) -> types.CallToolResult:
        args = parse_run(arguments, self.settings)
        limits = Limits(timeout_ms=max(1, round(args.timeout_s * 1000)))
        held: Reservation | None = None
        if args.idempotency_key is not None:
            got = await asyncio.to_thread(
                reserve,
                self.ws.store,
                principal,
                args.idempotency_key,
                args.code,
                self.ws.executor_id,
            )
            if not isinstance(got, Reservation):  # a retry: the first call's run
                return await self._rerun(ctx, got)
            held = got
        result = await self._run_cancellable(args.code, limits, principal, held)
        return await self._after_run(ctx, result, principal)

    async def _rerun(self, ctx: ServerRequestContext[Any], row: Any) -> types.CallToolResult:
        """A retry with a key: the first call's run as it stands now; its approvals are
        followed, and nobody is asked again."""

        async def heartbeat(message: str) -> None:
            try:
                await ctx.session.report_progress(0, None, message)
            except Exception:  # the client is gone: the cancel that follows ends this call
                pass

        wait = self.settings.max_timeout_s + RESUMING_GRACE_S
        result = await run_of(self.ws.store, row, wait, heartbeat, HEARTBEAT_S)
        return await self._after_run(ctx, result, None, ask=False)

    async def _after_run(
        self,
        ctx: ServerRequestContext[Any],
        result: RunResult,
        principal: str | None,
        *,
        ask: bool = True,
    ) -> types.CallToolResult:
        _call_run.set(result.run_id)
        most = self.settings.max_timeout_s
        if result.status != "interrupted":
            return run_reply(result, max_timeout_s=most)
        reason = await asyncio.to_thread(self.ws.not_saved_reason, result)
        if reason is not None:
            sentence, action = not_saved_words(reason)
            return run_reply(
                result,
                max_timeout_s=most,
                paused_next=sentence,
                paused_action=action,
                waiting=False,
            )
        start = partial(standing, self.ws.store, result)
        refused: list[str] = []
        if ask and self.options.approve_via == "client" and can_ask(ctx):
            state, refused = await self._wait_asking_client(ctx, start, principal)
        else:
            if self.options.approve_via == "client":
                self._say_once(
                    "--approve-via client: this client cannot be asked (it has no form "
                    "elicitation, or speaks the 2026-07-28 protocol, where a server cannot ask); "
                    "its approvals are decided in run-repl"
                )
            state = await self._wait(ctx, start, self.options.approval_wait_s)
        return self._after_wait(state, result, refused)

    async def _wait_asking_client(
        self, ctx: ServerRequestContext[Any], start: Any, principal: str | None
    ) -> tuple[Standing, list[str]]:
        """Wait as usual while the client's user is asked too; a decision they made is
        carried out to its end before the call answers. With where the run stands:
        the answers the approvals policy refused, as said."""
        asker = ClientApprovals(self.ws, ctx, transport=self.options.transport, principal=principal)
        async with anyio.create_task_group() as tg:
            tg.start_soon(asker.ask_while_waiting)
            state = await self._wait(ctx, start, self.options.approval_wait_s, also=asker.heard)
            tg.cancel_scope.cancel()  # a question still open is withdrawn
        if state.status == "waiting" and asker.deciding is not None:
            await asker.settled()
            state = await asyncio.to_thread(start)
        return state, asker.refused

    async def _run_cancellable(
        self, code: str, limits: Limits, owner: str | None, held: Reservation | None = None
    ) -> RunResult:
        """Run and keep the run (as `owner`'s; `held`: the idempotency key it answers);
        if this call is cancelled (the client went away), stop the run at once, keep it
        in the history as aborted, and let the cancel go on."""
        cancel = asyncio.Event()
        # The run's value and logs are written with its history row (one transaction).
        with self.ws.runner.holding_values() as holding:
            job = asyncio.ensure_future(
                self.ws.runner.run(code, self.ws.host.functions, limits=limits, cancel=cancel)
            )

        def settle(result: RunResult | None) -> None:
            if held is not None:
                try:
                    held.settle(result)
                except Exception as exc:
                    self.ws.warnings.append(f"could not record the idempotency key: {exc}")

        def keep(result: RunResult | None) -> None:
            values = holding.close()
            if result is not None:
                if owner is not None and result.run_id is not None:
                    self._owners.keep(result.run_id, owner)
                # The key names the run once the history has it (a retry reads it there)
                # and before its approvals are saved: a retry on another server finds
                # the run whenever this one dies after a person could be asked.
                self.ws.remember(
                    result, code, owner, values=values, recorded=partial(settle, result)
                )
            else:
                self.ws.runner.store_now(values)
                settle(None)

        try:
            result = await asyncio.shield(job)
        except asyncio.CancelledError:
            cancel.set()
            with anyio.CancelScope(shield=True), anyio.move_on_after(CANCEL_GRACE_S):
                try:
                    stopped = await job
                except Exception:  # it failed as it stopped: nothing to keep
                    await asyncio.to_thread(keep, None)
                else:
                    await asyncio.to_thread(keep, stopped)
            raise
        except Exception:
            await asyncio.to_thread(keep, None)
            raise
        else:
            await asyncio.to_thread(keep, result)
        finally:
            # A run that outlived its grace stores its own values from here on.
            self.ws.runner.store_behind(holding.close())
        self._log_warnings()
        return result

    async def _wait(
        self,
        ctx: ServerRequestContext[Any],
        start: Any,
        wait_s: float,
        *,
        also: Callable[[Standing], None] | None = None,
    ) -> Standing:
        loop = asyncio.get_running_loop()
        began = loop.time()
        sent = 0.0

        async def report(state: Standing) -> None:
            nonlocal sent
            if also is not None:
                also(state)
            # Progress must grow with every notification: the seconds waited so far.
            sent = max(sent + 0.001, round(loop.time() - began, 3))
            message = waiting_message(state, self.ws.approve_command)
            try:
                await ctx.session.report_progress(sent, wait_s or None, message)
            except Exception:  # the client is gone: the cancel that follows ends this call
                pass

        # A resume started in time ends within its claim: its run's timeout and a grace.
        grace = self.settings.max_timeout_s + RESUMING_GRACE_S
        return await wait_for_decision(
            self.watch, start, wait_s, report, heartbeat_s=HEARTBEAT_S, resuming_grace_s=grace
        )

    def _after_wait(
        self, state: Standing, first: RunResult, refused: list[str] | None = None
    ) -> types.CallToolResult:
        most = self.settings.max_timeout_s
        if state.status == "done" and state.result is not None:
            return run_reply(state.result, max_timeout_s=most, resumed_from=first.run_id)
        if state.status == "ended":
            return status_reply(
                state,
                wait_s=self.options.approval_wait_s,
                approve_command=self.ws.approve_command,
                max_timeout_s=most,
            )
        latest = state.result or first
        sentence, action = paused_words(
            latest.run_id,
            state.approvals,
            self.options.approval_wait_s,
            self.ws.approve_command,
        )
        if refused:
            sentence = " ".join(["The client's answer was not recorded:", *refused, sentence])
        return run_reply(
            latest,
            max_timeout_s=most,
            paused_next=sentence,
            paused_action=action,
            resumed_from=first.run_id,
        )

    # ------------------------------------------------------------------ expand_result
    async def expand(
        self, arguments: dict[str, Any], principal: str | None
    ) -> types.CallToolResult:
        args = parse_expand(arguments)
        limit = args.limit if args.limit is not None else min(BUDGET_LINES, MAX_PAGE)
        if principal is not None:
            made_by = self.ws.runner.recent_run_of(args.ref)  # written behind: not stored yet
            # Made here: known without reading the history.
            owner = self._owners.of(made_by) if made_by is not None else None
            if owner is None and made_by is not None:
                owner = await asyncio.to_thread(self.ws.store.owner_of_run, made_by)
            elif owner is None:
                owner = await asyncio.to_thread(self.ws.store.owner_of_ref, args.ref)
            if owner != principal:  # another's ref reads as an unknown one: ids are no keys
                exc = ResultRefNotFound(args.ref)
                raise ToolError(exc.code, exc.message, exc.next_actions[0])
        try:
            page = await asyncio.to_thread(self.ws.runner.expand, args.ref, args.offset, limit)
        except (ResultRefNotFound, ValueTooDeep) as exc:
            raise ToolError(exc.code, exc.message, exc.next_actions[0]) from None
        if args.offset >= page.total and (args.offset > 0 or page.total > 0):
            last = max(page.total - 1, 0)
            raise ToolError(
                RESULT_OFFSET_OUT_OF_RANGE,
                f"offset {args.offset} is past the end: {args.ref} holds {page.total} item"
                f"{'' if page.total == 1 else 's'} (offsets 0 to {last}).",
                edit(
                    f"Pass an offset from 0 to {last}; there is nothing after item {page.total}.",
                    argument="offset",
                ),
            )
        items = page.items if args.limit is not None else leading_items(page.items, page.rest)
        return page_reply(page, items)

    # ------------------------------------------------------------------ docs
    def docs(self, arguments: dict[str, Any]) -> types.CallToolResult:
        args = parse_docs(arguments)
        text, declared = self._declarations, self._declared
        if args.path is not None:
            text, declared = declarations(self.ws.host, self.approval_mode, only=args.path)
            if not declared:
                names = [d.path for d in self._declared] + self.namespaces
                close = closest(args.path, names)
                raise ToolError(
                    "RUN_UNKNOWN_MEMBER",
                    f"The host has no function or namespace {args.path!r}"
                    + (f": did you mean {close}?" if close else "."),
                    edit(
                        "Pass a namespace or function the host has, or leave path out.",
                        argument="path",
                        did_you_mean=[close] if close else [],
                    ),
                )
        infos = {i.path: i for i in describe(self.ws.host)}
        functions = [
            {
                "path": d.path,
                "signature": d.signature,
                "doc": d.doc,
                "needs_approval": d.approval == "ask",
                "approval": d.approval,
                "python_signature": infos[d.path].python_signature if d.path in infos else "",
            }
            for d in declared
        ]
        return docs_reply(self.ws.host.name, functions, text)

    # ------------------------------------------------------------------ approval_status
    async def approval_status(
        self, ctx: ServerRequestContext[Any], arguments: dict[str, Any], principal: str | None
    ) -> types.CallToolResult:
        args = parse_status(arguments, self.settings)
        store = self.ws.store
        if args.run_id is not None:
            run_id = args.run_id

            def start() -> Standing:
                return standing_of_run(store, run_id, principal)
        else:
            ids = args.approval_ids or []

            def start() -> Standing:
                return standing_of_approvals(store, ids, principal)

        state = await asyncio.to_thread(start)  # an unknown id is an error at once
        asked = args.run_id
        if asked is None and args.approval_ids:
            first = await asyncio.to_thread(store.get_approval, args.approval_ids[0])
            asked = first.run_id if first is not None else None
        if state.status == "waiting" and args.wait_s > 0:
            state = await self._wait(ctx, start, args.wait_s)
        return status_reply(
            state,
            wait_s=args.wait_s,
            approve_command=self.ws.approve_command,
            max_timeout_s=self.settings.max_timeout_s,
            asked=asked,
        )

    # ------------------------------------------------------------------ resources and prompt
    async def list_resources(
        self, ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListResourcesResult:
        return types.ListResourcesResult(
            resources=[
                types.Resource(
                    uri=DTS_URI,
                    name="host.d.ts",
                    title=f"The functions of host {self.ws.host.name!r}, as TypeScript",
                    description="TypeScript declarations of every host function a snippet can "
                    "call, with docs and which ones need a person's approval.",
                    mime_type="text/typescript",
                ),
                types.Resource(
                    uri=GUIDE_URI,
                    name="guide",
                    title="Writing run-repl snippets",
                    description="The rules of the sandbox, results, errors and approvals, with "
                    "examples on this host.",
                    mime_type="text/markdown",
                ),
            ]
        )

    async def read_resource(
        self, ctx: ServerRequestContext[Any], params: types.ReadResourceRequestParams
    ) -> types.ReadResourceResult:
        if params.uri == DTS_URI:
            text, mime = self._declarations, "text/typescript"
        elif params.uri == GUIDE_URI:
            text, mime = self._guide(), "text/markdown"
        else:
            raise MCPError(
                RESOURCE_NOT_FOUND,
                f"No resource {params.uri!r}: run-repl has {DTS_URI} and {GUIDE_URI}.",
                {"uri": params.uri},
            )
        return types.ReadResourceResult(
            contents=[types.TextResourceContents(uri=params.uri, mime_type=mime, text=text)]
        )

    def _guide(self) -> str:
        examples: list[tuple[str, str]] = []
        if self.ws.host.is_demo:
            from ..host.demo import DEMO_EXAMPLES

            examples = DEMO_EXAMPLES
        return guide.guide(
            self.ws.host.name, self.namespaces, self.options.approval_wait_s, examples
        )

    async def list_prompts(
        self, ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListPromptsResult:
        return types.ListPromptsResult(
            prompts=[
                types.Prompt(
                    name=TASK_PROMPT,
                    title="Do a task with run-repl",
                    description="Do a task by running a snippet against the host's functions "
                    "(the prompt carries their declarations).",
                    arguments=[
                        types.PromptArgument(
                            name="task", description="What to find out or do.", required=True
                        )
                    ],
                )
            ]
        )

    async def get_prompt(
        self, ctx: ServerRequestContext[Any], params: types.GetPromptRequestParams
    ) -> types.GetPromptResult:
        if params.name != TASK_PROMPT:
            raise MCPError(-32602, f"No prompt {params.name!r}: run-repl has {TASK_PROMPT}.")
        task = (params.arguments or {}).get("task", "").strip()
        if not task:
            raise MCPError(-32602, f"{TASK_PROMPT} needs a task argument: what to find out or do.")
        return types.GetPromptResult(
            description=f"Do a task on host {self.ws.host.name!r} with run-repl",
            messages=[
                types.PromptMessage(
                    role="user",
                    content=types.TextContent(text=guide.task_prompt(task, self._declarations)),
                )
            ],
        )

    # ------------------------------------------------------------------ the rest
    def _say_once(self, text: str) -> None:
        if text not in self._said:
            self._said.add(text)
            print(f"run-repl mcp: {text}", file=sys.stderr, flush=True)

    def _log_warnings(self) -> None:
        """The workspace's warnings since the last call (those made before the server
        started were said by the command that opened the workspace)."""
        for warning in self.ws.warnings[self._warned :]:
            print(f"run-repl mcp: {warning}", file=sys.stderr, flush=True)
        self._warned = len(self.ws.warnings)

    async def start_executor(self) -> None:
        """Register as an executor of this host and resume what is decided for it: the
        runs this server started first (a decision made anywhere then resumes here, in
        the process holding the agent's waiting call), then those whose starter is gone.
        A store in memory is this process's alone: nobody else decides in it."""
        if not self.ws.persistent or self._resumer is not None:
            return
        ws = self.ws
        resumer = ws.resumer("mcp")
        try:
            await asyncio.to_thread(resumer.register)
        except Exception as exc:  # the store failed: serve the agents anyway, say so once
            self._say_once(f"not resuming runs here (the store failed: {exc})")
            return
        self._resumer = resumer
        ws.executor_id = resumer.id  # this server's runs name it: it resumes them
        self._resumer_task = asyncio.create_task(
            resumer.run(self._resumer_stop), name="run-repl resumer"
        )

    async def stop_executor(self) -> None:
        """Take nothing new and leave the registry; a resume still running is cut, as
        the server's end cuts any run (its approvals then `unfinished`)."""
        task, self._resumer_task = self._resumer_task, None
        if task is None:
            return
        self._resumer_stop.set()
        self.ws.executor_id = None
        try:
            await asyncio.wait_for(asyncio.shield(task), CANCEL_GRACE_S)
        except (TimeoutError, asyncio.CancelledError):
            task.cancel()
            with contextlib.suppress(BaseException):
                await task
        except Exception:
            pass

    async def close(self) -> None:
        await self.stop_executor()
        await self.watch.close()


# ---------------------------------------------------------------- transports
YOUNG_GENERATION = 20_000  # allocations between young collections (Python's default: 700)


def settle_heap() -> None:
    """Once the server is built: what start-up made (modules, schemas, the host) lives as
    long as the process, so the collector's full passes leave it alone (they paused the
    server 45-60 ms every few hundred runs, walking it); and the young generation is
    collected less often (one request makes and drops a few thousand objects)."""
    gc.collect()
    gc.freeze()
    young, middle, old = gc.get_threshold()
    gc.set_threshold(max(young, YOUNG_GENERATION), middle, old)


async def serve_stdio(app: RunReplMcp) -> None:
    """Serve one client over stdin/stdout until it closes stdin."""
    from .stdio_transport import stdio_server

    server = app.build()
    settle_heap()
    await app.start_executor()
    # The transport points fd 1 at stderr while it serves, but Python's own sys.stdout keeps
    # what a host function prints in its buffer, and would flush it onto the wire at
    # exit: print() goes to stderr, at once, while this serves.
    # (After the transport took fd 1: it serves the wire from a duplicate of it.)
    real_stdout = sys.stdout
    try:
        async with stdio_server() as (read, write):
            real_stdout.flush()
            sys.stdout = sys.stderr
            await server.run(read, write, server.create_initialization_options())
    except BaseExceptionGroup as group:
        _, rest = group.split(BrokenPipeError)
        if rest is not None:
            raise
        # The client died while an answer was on its way (its run is stopped and kept
        # by then): the command's quiet broken-pipe ending, as `| head` ends a listing.
        raise BrokenPipeError from None
    finally:
        sys.stdout = real_stdout
        await app.close()


def bind(host: str, port: int) -> socket.socket:
    """A listening socket on host:port (port 0: any free one); OSError says why not."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    # IPPROTO_TCP named, not left 0: asyncio turns Nagle off only on sockets that say
    # so, and with it on a response's body waits out the client's 40 ms delayed ACK.
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
        sock.listen(128)
    except OSError:
        sock.close()
        raise
    sock.setblocking(False)
    return sock


@dataclass(frozen=True)
class HttpSettings:
    """How `--http` serves: who may call (None: anyone, --no-auth), the Host and Origin
    values it answers, its limits, and whether sessions live in this process."""

    tokens: TokenTable | None
    hosts: list[str]
    origins: list[str]
    limits: HttpLimits = field(default_factory=HttpLimits)
    stateless: bool = True


def http_app(app: RunReplMcp, http: HttpSettings) -> Any:
    """The ASGI app of `--http`: Host/Origin, then credentials, then the body cap, then MCP.

    Stateless: each request stands alone (no `Mcp-Session-Id`), so a 2025-handshake
    client's requests may go to any server of a team; progress notes still reach the
    client on the response stream of the call they belong to, and a call that asked for
    none gets one JSON response instead of a stream (http_streams.py)."""
    from mcp.server.transport_security import TransportSecuritySettings

    server = app.build()
    security = TransportSecuritySettings(
        enable_dns_rebinding_protection=True,
        allowed_hosts=[*http.hosts, *(f"{h}:*" for h in http.hosts)],
        allowed_origins=[*http.origins, *(f"{o}:*" for o in http.origins)],
    )
    inner: Any
    if http.stateless:
        from .http_streams import stateless_mcp_app

        inner = stateless_mcp_app(server, security, http.limits.max_request_bytes)
    else:
        inner = server.streamable_http_app(
            stateless_http=False,
            transport_security=security,
            max_request_body_size=http.limits.max_request_bytes,
        )
    inner = BodyLimit(inner, http.limits.max_request_bytes)
    if http.tokens is not None:
        inner = BearerAuth(inner, http.tokens)
    return HostOriginGuard(inner, http.hosts, http.origins)


async def serve_http(
    app: RunReplMcp, sock: socket.socket, http: HttpSettings, *, on_ready: Any = None
) -> None:
    """Serve streamable HTTP at /mcp on a bound socket, until interrupted."""
    import uvicorn

    host, port = sock.getsockname()[:2]
    limits = http.limits
    config = uvicorn.Config(
        http_app(app, http),
        log_level="warning",
        lifespan="on",
        access_log=False,
        http=guarded_protocol(limits),
        timeout_keep_alive=max(1, round(limits.keep_alive_s)),
        h11_max_incomplete_event_size=limits.max_header_bytes,
        limit_concurrency=limits.max_connections,
    )
    web = uvicorn.Server(config)
    config.load()  # the app and its protocol classes, before the heap settles
    settle_heap()
    await app.start_executor()
    if on_ready is not None:
        on_ready(f"http://{'[' + host + ']' if ':' in host else host}:{port}/mcp")
    try:
        await web.serve(sockets=[sock])
    finally:
        await app.close()


def started_line(app: RunReplMcp, where: str) -> str:
    """The one line a person (or a client's log) sees at start; the address ends it."""
    ws = app.ws
    return (
        f"run-repl mcp {__version__}: host {ws.host.name!r} ({len(ws.host.manifest.functions)} "
        f"functions), store {ws.store.location}, approvals wait {app.options.approval_wait_s:g} s; "
        f"serving {where}"
    )


__all__ = [
    "HttpSettings",
    "McpOptions",
    "RunReplMcp",
    "bind",
    "http_app",
    "serve_http",
    "serve_stdio",
    "started_line",
]
