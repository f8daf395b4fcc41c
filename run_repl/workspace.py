"""What every front end works with: settings, the store, the host and a runner.

    with open_workspace(host_spec, data_dir_override=...) as ws:
        result = await ws.run(source)       # kept in the history, approvals saved
        ws.not_saved_reason(result)         # None when its approvals are in the store

The CLI, the line REPL and the IDE open one of these; closing it (the `with`
block does) flushes the runner. A data directory that cannot work (a file, a
place that cannot be created or written, one another user owns or can write, a
secret or store in it that is a link or not the user's own) is a WorkspaceError
with one line that says what to do, raised before anything else is opened.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import secrets
import shlex
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType
from typing import Any

from .config import Settings, config_path, load_settings
from .host.loader import HostLoadError, LoadedHost, load_host
from .paths import NotPrivate, check_private_dir, check_private_file, data_dir
from .present.approvals import SessionApprovals, approve_command, default_data_dir_flag
from .sandbox.errors import RunReplError
from .sandbox.limits import MIB
from .sandbox.result import CallRecord, RunResult
from .sandbox.resume.continuation import (
    SECRET_FILE,
    SecretTooShort,
    as_secret,
    load_or_create_secret,
)
from .sandbox.runner import Runner, create_runner
from .sandbox.wire.result_store import StoredItems
from .sqlite_files import SIDE_FILES
from .store import STORE_FILE, MemoryStore, Store, StoreError, memory_warning, open_store_or_memory
from .store.approvals.dispatch import Dispatched, dispatch
from .store.approvals.flow import decide, record_run, save_interrupted
from .store.approvals.resumer import Resumer


class WorkspaceError(RunReplError):
    """The workspace cannot open (its data directory or secret); the message is one line."""

    code = "WORKSPACE_UNUSABLE"


@dataclass
class Workspace:
    settings: Settings
    store: Store
    host: LoadedHost
    runner: Runner
    data_dir: Path
    warnings: list[str] = field(default_factory=list)
    session_approvals: SessionApprovals = field(default_factory=SessionApprovals)
    """Host paths approved "for the rest of this session" (the REPL and the IDE share the rule)."""
    store_flag: str | None = None
    """The --store URL this workspace was opened with, if any (commands it prints repeat it)."""
    store_problem: StoreError | None = None
    """Why the store is in memory (the file or server could not be used), else None."""
    store_warning: str | None = None
    """What `warnings` says about it (once), else None."""
    executor_id: str | None = None
    """This process's id in the store's executor registry, when it resumes runs of its
    host (an MCP server, `run-repl serve`): its runs' approvals name it (`resume_by`)."""

    async def run(self, source: str, **kwargs: Any) -> RunResult:
        """Run a snippet against the host; keep it in the history, and its approvals."""
        returned: list[RunResult] = []
        their_on_call = kwargs.get("on_call")

        def on_call(call: CallRecord) -> Any:
            if returned and call.settled is True:
                # A call the run gave up on (cancelled while a sync function ran) has
                # ended since: the history says how. Its record in the result is the same.
                asyncio.get_running_loop().create_task(
                    asyncio.to_thread(self.remember_late, returned[0], source)
                )
            return their_on_call(call) if their_on_call is not None else None

        kwargs["on_call"] = on_call
        # The run's value and logs are written with its history row (one transaction),
        # before this returns and anyone sees the refs it names.
        with self.runner.holding_values() as held:
            try:
                result = await self.runner.run(source, self.host.functions, **kwargs)
            except BaseException:
                self.runner.store_behind(held.close())
                raise
        returned.append(result)
        values = held.close()
        try:
            # Off the event loop: a team store may wait for a lost connection to come back.
            await asyncio.to_thread(self.remember, result, source, values=values)
        except BaseException:
            # Cancelled while remembering (its thread goes on and writes them too: the
            # same rows again), or worse: the values are not left unwritten.
            self.runner.store_behind(values)
            raise
        return result

    def remember_late(self, result: RunResult, source: str) -> None:
        try:
            record_run(self.store, result, source=source, host=self.host.name)
        except Exception as exc:
            self.warnings.append(
                f"could not record a late call end in {self.store.location}: {exc}"
            )

    def remember(
        self,
        result: RunResult,
        source: str,
        owner: str | None = None,
        values: Sequence[StoredItems] = (),
        recorded: Callable[[], None] | None = None,
    ) -> None:
        """Keep `result` in the history and its approvals in the store; `owner`: the
        MCP principal whose call it was (only it sees them over MCP); `values`: what
        the result names, held by the runner (`Runner.holding_values`), written in the
        history row's transaction, or on their own if that fails: in the store either
        way when this returns. `recorded` (which must not raise): called once the
        history has the run (or could not take it), before any approval is saved: the
        MCP server names an idempotency key's run there, so a retry finds the run
        whenever this process dies after a person could be asked."""
        written = not values
        store, host = self.store, self.host.name
        try:
            try:
                record_run(store, result, source=source, host=host, owner=owner, values=values)
                written = True
            finally:
                if recorded is not None:
                    recorded()
            save_interrupted(
                store, result, source=source, host=host, owner=owner, resume_by=self.executor_id
            )
        except Exception as exc:  # the history is a convenience: never lose the result over it
            self.warnings.append(f"could not record the run in {self.store.location}: {exc}")
        finally:
            if not written:  # the values the result names, all the same
                self.runner.store_now(values)

    async def decide(self, decisions: dict[str, Any], **kwargs: Any) -> RunResult:
        """Approve (True) or deny (False) pending approvals, and resume their run, as the
        person the settings name, under the settings' approvals policy."""
        kwargs.setdefault("approver", self.settings.approvals.name)
        kwargs.setdefault("deciders", self.settings.approvals.deciders)
        return await decide(self.store, self.runner, self.host.functions, decisions, **kwargs)

    async def dispatch(
        self,
        decisions: dict[str, Any],
        *,
        started_here: bool = False,
        can_resume_here: bool = True,
        **kwargs: Any,
    ) -> Dispatched:
        """Decide, as `decide` does, where the run resumes best: recorded for the live
        process that started the run or a server with this host (said in the answer),
        else resumed here (`store/approvals/dispatch.py`). `started_here`: this process
        started the run and waits for it, so it resumes here."""
        kwargs.setdefault("approver", self.settings.approvals.name)
        kwargs.setdefault("deciders", self.settings.approvals.deciders)
        return await dispatch(
            self.store,
            self.runner,
            self.host.functions,
            decisions,
            here=self.executor_id,
            started_here=started_here,
            can_resume_here=can_resume_here,
            **kwargs,
        )

    def resumer(self, kind: str, **options: Any) -> Resumer:
        """An executor of this workspace's host (`store/approvals/resumer.py`): `kind`
        "mcp", "serve" or "ide"; `options` as Resumer takes them (max_resumes, on_resumed).
        The digest is read at each use: an upstream's changed tools change it."""
        return Resumer(
            self.store,
            self.runner,
            self.host.functions,
            host=self.host.name,
            digest=lambda: self.host.manifest.digest,
            kind=kind,
            **options,
        )

    @property
    def persistent(self) -> bool:
        """Whether the store outlives this process (False: it fell back to memory)."""
        return not isinstance(self.store, MemoryStore)

    def not_saved_reason(self, result: RunResult) -> str | None:
        """Why the approvals `result` waits for are not in a lasting store, or None
        when they all are (checked in the store, not assumed)."""
        if result.status != "interrupted" or not result.interruptions:
            return None
        if not self.persistent:
            return f"the store is in memory only ({self.store.location})"
        try:
            missing = [i.id for i in result.interruptions if self.store.get_approval(i.id) is None]
        except Exception as exc:
            return f"the store could not be read back ({exc})"
        if missing:
            return f"writing it to {self.store.location} failed"
        return None

    def approve_command(self, approval_id: str, action: str = "approve") -> str:
        """The shell command that decides `approval_id` later, with the flags it needs."""
        command = approve_command(
            approval_id,
            host=None if self.host.is_demo else self.host.name,
            data_dir=default_data_dir_flag(self.data_dir, data_dir()),
            action=action,
        )
        if self.store_flag:
            from .store.store_url import has_password

            shown = "'<the same --store URL>'" if has_password(self.store_flag) else self.store_flag
            command += f" --store {shlex.quote(shown) if shown == self.store_flag else shown}"
        return command

    def close(self) -> None:
        """Write what is still on its way to the store, then close it (a server
        store's connections and listening thread end with it)."""
        try:
            self.runner.flush()
        finally:
            self.store.close()
            if "+mcp:" in self.host.name or self.host.name.startswith("mcp:"):
                from .host.upstream.hosts import close_all

                close_all()  # the upstream processes this workspace started

    def __enter__(self) -> Workspace:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()


def prepare_data_dir(directory: Path) -> None:
    """Make the data directory (0700: it holds sources, results and tokens) or
    raise WorkspaceError saying, in one line, why it cannot be used."""
    fix = "pass --data-dir (or set RUN_REPL_DATA_DIR) to a directory you can write"
    if directory.exists() and not directory.is_dir():
        raise WorkspaceError(f"the data directory {directory} is a file, not a directory: {fix}.")
    try:
        directory.mkdir(mode=0o700, parents=True, exist_ok=True)
    except OSError as exc:
        raise WorkspaceError(
            f"cannot create the data directory {directory} ({exc.strerror or exc}): {fix}."
        ) from None
    try:
        check_private_dir(directory)
        # Files someone else may have put there before it was private are refused too.
        for name in (SECRET_FILE, *(STORE_FILE + s for s in ("", *SIDE_FILES))):
            with contextlib.suppress(FileNotFoundError):
                path = directory / name
                check_private_file(os.lstat(path), path, secret=name == SECRET_FILE)
    except NotPrivate as exc:
        raise WorkspaceError(str(exc)) from None
    try:
        with tempfile.TemporaryFile(dir=directory):
            pass
    except OSError as exc:
        raise WorkspaceError(
            f"cannot write in the data directory {directory} ({exc.strerror or exc}): {fix}."
        ) from None


def open_workspace(
    host_spec: str | None = None,
    *,
    upstreams: list[str] | None = None,
    data_dir_override: str | None = None,
    timeout_ms: int | None = None,
    memory_mb: int | None = None,
    store_url: str | None = None,
) -> Workspace:
    """Raises WorkspaceError for an unusable data directory or secret, HostLoadError
    for a bad --host, pydantic ValidationError for bad limits.

    The store: `store_url` (--store), else RUN_REPL_STORE_URL, else the config's
    [store] url (a team's PostgreSQL server), else SQLite in the data directory."""
    settings, config_problem = load_settings()
    warnings = [config_problem] if config_problem else []
    directory = data_dir(data_dir_override)
    prepare_data_dir(directory)
    limits = settings.limits_model(
        timeout_ms=timeout_ms, memory_bytes=memory_mb * MIB if memory_mb is not None else None
    )
    secret = _secret(directory, warnings)
    url, refused = _store_url(store_url, settings, warnings)
    store: Store
    problem: StoreError | None
    store_warning: str | None
    if refused:
        store = MemoryStore(location="memory (the team store's URL was refused)")
        problem, store_warning = StoreError(refused), refused
    else:
        store, problem = open_store_or_memory(
            directory,
            max_bytes=settings.store.max_bytes,
            max_age_s=settings.store.max_age_days * 86400,
            url=url,
            schema=settings.store.db_schema,
        )
        store_warning = memory_warning(problem, team=bool(url)) if problem is not None else None
    if store_warning:
        warnings.append(store_warning)
    host = _host(host_spec or settings.host, upstreams, settings, directory, warnings)
    # The store is the runner's continuation store too: each token resumes its run once.
    runner = create_runner(
        limits=limits,
        store=store,
        continuation_store=store,
        secret=secret,
        approvals=dict(settings.approvals.policy) or None,
    )
    return Workspace(
        settings,
        store,
        host,
        runner,
        directory,
        warnings,
        store_flag=store_url,
        store_problem=problem,
        store_warning=store_warning,
    )


def _host(
    spec: str | None,
    upstream_flags: list[str] | None,
    settings: Settings,
    directory: Path,
    warnings: list[str],
) -> LoadedHost:
    """The --host (or the demo) and the upstreams of the config and the command line.
    Upstreams alone replace the demo; with a --host they sit beside it."""
    from .host.upstream.spec import (
        UpstreamSpecError,
        merge_specs,
        parse_upstream_flag,
        upstreams_from_config,
    )

    try:
        specs = merge_specs(
            upstreams_from_config(settings.upstreams),
            [parse_upstream_flag(flag) for flag in upstream_flags or ()],
        )
    except UpstreamSpecError as exc:
        raise HostLoadError(str(exc)) from None
    if not specs:
        return load_host(spec, data_dir_override=str(directory), warn=warnings.append)
    from .host.upstream.hosts import with_upstreams

    base = load_host(spec, data_dir_override=str(directory), warn=warnings.append) if spec else None
    return with_upstreams(base, specs, directory / "logs")


def _store_url(
    given: str | None, settings: Settings, warnings: list[str]
) -> tuple[str | None, str | None]:
    """The team store's URL and where it came from; and why it is refused, if it is.

    A password must not sit where others can read it: in the config file only if
    the file is the user's own and private (0600); on the command line, a warning
    (other users see it in `ps`)."""
    from .store.store_url import has_password, mask

    if given:
        if has_password(given):
            warnings.append(
                f"--store {mask(given)}: a password on the command line can be seen by other "
                "users of this machine; put it in ~/.pgpass (or PGPASSWORD) instead."
            )
        return given, None
    url = settings.store.url
    if not url or os.environ.get("RUN_REPL_STORE_URL") or not has_password(url):
        return url, None
    path = config_path()
    try:
        info = path.stat()
    except OSError:
        return url, None
    mine = not hasattr(os, "getuid") or info.st_uid == os.getuid()
    if mine and not info.st_mode & 0o077:
        return url, None
    why = (
        "belongs to another user"
        if not mine
        else f"can be read by others (mode {info.st_mode & 0o777:o})"
    )
    return url, (
        f"{path} holds the team store's password ({mask(url)}) and {why}: the store is not "
        f"opened. `chmod 600 {path}`, or move the password to ~/.pgpass. Running with an "
        "in-memory store: results, history and approvals are NOT saved."
    )


def _secret(directory: Path, warnings: list[str]) -> bytes:
    try:
        if os.environ.get("RUN_REPL_SECRET"):
            return as_secret(os.environ["RUN_REPL_SECRET"])
        return load_or_create_secret(directory)
    except SecretTooShort as exc:
        where = "RUN_REPL_SECRET" if os.environ.get("RUN_REPL_SECRET") else str(directory)
        raise WorkspaceError(f"{where}: {exc}") from None
    except NotPrivate as exc:  # before OSError: another user's key is refused, not worked around
        raise WorkspaceError(str(exc)) from None
    except OSError as exc:
        warnings.append(
            f"cannot keep the continuation secret in {directory} ({exc}): using one for this process only, "
            "so pending approvals cannot be resumed after it exits. Set RUN_REPL_SECRET or --data-dir."
        )
        return secrets.token_hex(32).encode()
