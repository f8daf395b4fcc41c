"""What every front end works with: settings, the store, the host and a runner.

The CLI, the line REPL and the TUI open one of these and run snippets through
`run_and_record`, which also keeps the history and the pending approvals.
"""

from __future__ import annotations

import os
import secrets
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .config import Settings, load_settings
from .host.loader import LoadedHost, load_host
from .paths import data_dir
from .sandbox.continuation import as_secret, load_or_create_secret
from .sandbox.limits import MIB
from .sandbox.result import RunResult
from .sandbox.runner import Runner, create_runner
from .store import Store, open_store
from .store.approval_flow import decide, record_run, save_interrupted


@dataclass
class Workspace:
    settings: Settings
    store: Store
    host: LoadedHost
    runner: Runner
    data_dir: Path
    warnings: list[str] = field(default_factory=list)

    async def run(self, source: str, **kwargs: Any) -> RunResult:
        """Run a snippet against the host; keep it in the history, and its approvals."""
        result = await self.runner.run(source, self.host.functions, **kwargs)
        self.remember(result, source)
        return result

    def remember(self, result: RunResult, source: str) -> None:
        try:
            record_run(self.store, result, source=source, host=self.host.name)
            save_interrupted(self.store, result, source=source, host=self.host.name)
        except Exception as exc:  # the history is a convenience: never lose the result over it
            self.warnings.append(f"could not record the run in {self.store.location}: {exc}")

    async def decide(self, decisions: dict[str, Any], **kwargs: Any) -> RunResult:
        """Approve (True) or deny (False) pending approvals, and resume their run."""
        return await decide(self.store, self.runner, self.host.functions, decisions, **kwargs)

    def close(self) -> None:
        self.runner.flush()


def open_workspace(
    host_spec: str | None = None,
    *,
    data_dir_override: str | None = None,
    timeout_ms: int | None = None,
    memory_mb: int | None = None,
) -> Workspace:
    """Raises HostLoadError for a bad --host, pydantic ValidationError for bad limits."""
    settings, problem = load_settings()
    warnings = [problem] if problem else []
    directory = data_dir(data_dir_override)
    store, warning = open_store(
        directory, max_bytes=settings.store.max_bytes, max_age_s=settings.store.max_age_days * 86400
    )
    if warning:
        warnings.append(warning)
    host = load_host(
        host_spec or settings.host, data_dir_override=str(directory), warn=warnings.append
    )
    limits = settings.limits_model(
        timeout_ms=timeout_ms, memory_bytes=memory_mb * MIB if memory_mb is not None else None
    )
    # The store is the runner's continuation store too: each token resumes its run once.
    runner = create_runner(
        limits=limits,
        store=store,
        continuation_store=store,
        secret=_secret(directory, warnings),
    )
    return Workspace(settings, store, host, runner, directory, warnings)


def _secret(directory: Path, warnings: list[str]) -> bytes:
    if os.environ.get("RUN_REPL_SECRET"):
        return as_secret(os.environ["RUN_REPL_SECRET"])
    try:
        return load_or_create_secret(directory)
    except OSError as exc:
        warnings.append(
            f"cannot keep the continuation secret in {directory} ({exc}): using one for this process only, "
            "so pending approvals cannot be resumed after it exits. Set RUN_REPL_SECRET or --data-dir."
        )
        return secrets.token_hex(32).encode()
