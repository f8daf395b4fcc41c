"""The user's settings: one TOML file in the config directory, validated once.

    # ~/.config/run-repl/config.toml
    theme = "run-repl-dark"
    host = "myapp.agent_host:HOSTS"   # default for --host
    [limits]
    timeout_ms = 60000
    [keymap]
    "app.run" = "ctrl+r"              # binding id = keys
    [store]
    max_bytes = 2147483648
    url = "postgresql://alice@db.internal/runrepl"   # a team's server (default: SQLite)
    [approvals]
    name = "alice"                    # who you are in the approvals audit
    [approvals.deciders]
    "bank" = ["alice", "bob"]         # only they decide bank.* approvals
    [approvals.policy]
    "git.git_commit" = "ask"          # over what the function declares; globs too
    [mcp]                             # `run-repl mcp --http`
    tokens_file = "~/.config/run-repl/mcp-tokens.toml"
    allowed_hosts = ["mcp.internal"]  # Host values besides the bound address
    header_timeout_s = 10             # limits for slow clients (see McpSettings)
    [upstreams.git]                   # an MCP server's tools as git.*
    command = "mcp-server-git"
    env = { GIT_TOKEN = "..." }       # reaches the process only

Environment overrides: RUN_REPL_HOST, RUN_REPL_THEME, RUN_REPL_STORE_URL,
RUN_REPL_APPROVER (and RUN_REPL_MCP_TOKEN, see run_repl.mcp.http_auth). A bad file never stops the program: it says what is wrong,
once, and uses the defaults.

Reading uses the standard library's `tomllib`; writing (the theme picked in
the app) uses tomlkit, as harlequin does, because a person's comments, key
order and quoting have to survive the program changing one value.
"""

from __future__ import annotations

import os
import tomllib
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from .paths import config_dir
from .present.files import atomic_write_text
from .present.formats import first_error
from .sandbox.errors import RunReplError
from .sandbox.limits import Limits

CONFIG_FILE = "config.toml"


class ConfigWriteError(RunReplError, OSError):
    """The settings file could not be updated; the message says why and what to do."""

    code = "CONFIG_WRITE_FAILED"


class StoreSettings(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    max_bytes: int = Field(1 << 30, ge=1 << 20)
    """How much the store keeps (values, history) before the oldest goes."""
    max_age_days: float = Field(30, gt=0)
    """How long a stored value or run is kept."""
    url: str | None = None
    """A team's PostgreSQL server (postgresql://USER@HOST/DATABASE) that every machine
    shares; without it, SQLite in the data directory. Its password belongs in
    ~/.pgpass, or this file must be yours alone (0600)."""
    db_schema: str = Field("run_repl", alias="schema", pattern=r"^[a-z_][a-z0-9_]{0,62}$")
    """The schema of that server the store keeps its tables in."""

    @field_validator("url")
    @classmethod
    def _server_url(cls, value: str | None) -> str | None:
        from .store.store_url import check_url

        return check_url(value) if value else None


class ApprovalSettings(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str | None = Field(None, min_length=1, max_length=200)
    """Who you are in the approvals audit (default: your OS user name)."""
    deciders: dict[str, list[str]] = Field(default_factory=dict)
    """Namespace (a host path such as "bank" or "documents.publish", or "*") = the
    names who may decide its approvals; the longest matching namespace applies."""
    policy: dict[str, Literal["ask", "deny", "allow"]] = Field(default_factory=dict)
    """Host path or glob = "ask", "deny" or "allow", over what each function declares
    (`"git.git_commit" = "ask"`, `"fs.*" = "deny"`); an exact path beats a glob."""


class McpSettings(BaseModel):
    """`run-repl mcp --http`: credentials, the names it answers to, and its limits."""

    model_config = ConfigDict(extra="forbid")

    tokens_file: str | None = None
    """principal = token (or "sha256:..."), under [tokens]; default mcp-tokens.toml in
    the config directory."""
    allowed_hosts: list[str] = Field(default_factory=list)
    """Host header values accepted besides the bound address (NAME or NAME:PORT)."""
    allowed_origins: list[str] = Field(default_factory=list)
    """Origin values accepted besides those of the allowed hosts (https://app.example)."""
    header_timeout_s: float = Field(10.0, gt=0, le=600)
    """A request's headers must arrive whole within this."""
    body_timeout_s: float = Field(30.0, gt=0, le=3600)
    """And its body within this, once the headers are in."""
    keep_alive_s: float = Field(5.0, ge=1, le=600)
    """An idle connection is closed after this."""
    max_connections: int = Field(256, ge=1, le=100_000)
    """Open connections at most; one past it is closed at once."""
    max_request_bytes: int = Field(1 << 20, ge=64 * 1024, le=1 << 30)
    """A request body over this gets 413."""


class Settings(BaseModel):
    """Every setting, validated: a bad one is reported with its place (`limits.timeout_ms`)."""

    model_config = ConfigDict(extra="forbid")

    theme: str = "run-repl-dark"
    """The IDE's theme (a built-in name, or one from the user's themes directory)."""
    host: str | None = None
    """The default for --host: package.module:attr or a .py file."""
    limits: Limits = Field(default_factory=Limits)
    """Run limits (any field of run_repl.Limits); the command line overrides them."""
    keymap: dict[str, str] = Field(default_factory=dict)
    """Binding id = keys, for the IDE."""
    store: StoreSettings = Field(default_factory=StoreSettings)
    approvals: ApprovalSettings = Field(default_factory=ApprovalSettings)
    mcp: McpSettings = Field(default_factory=McpSettings)
    upstreams: dict[str, dict[str, Any]] = Field(default_factory=dict)
    """MCP servers whose tools become host functions: `[upstreams.NAME]` with `command`,
    `args`, `env` (or `url`, `headers`); checked when a workspace opens."""

    def limits_model(self, **overrides: int | None) -> Limits:
        """These limits with the given fields replaced (None leaves a field as it is);
        raises pydantic's ValidationError for a value out of range."""
        values: dict[str, Any] = self.limits.model_dump()
        values.update({k: v for k, v in overrides.items() if v is not None})
        return Limits.model_validate(values)

    def with_environment(
        self, environ: os._Environ[str] | dict[str, str] | None = None
    ) -> Settings:
        env = os.environ if environ is None else environ
        update: dict[str, Any] = {
            key: env[name]
            for key, name in (("host", "RUN_REPL_HOST"), ("theme", "RUN_REPL_THEME"))
            if env.get(name)
        }
        if env.get("RUN_REPL_STORE_URL"):
            update["store"] = self.store.model_copy(update={"url": env["RUN_REPL_STORE_URL"]})
        if env.get("RUN_REPL_APPROVER"):
            update["approvals"] = self.approvals.model_copy(
                update={"name": env["RUN_REPL_APPROVER"]}
            )
        return self.model_copy(update=update) if update else self


def config_path(override: str | os.PathLike[str] | None = None) -> Path:
    return config_dir(override) / CONFIG_FILE


def load_settings(path: Path | None = None) -> tuple[Settings, str | None]:
    """The settings, and a one-line problem with the file if there was one."""
    path = path or config_path()
    problem: str | None = None
    settings = Settings()
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        data = {}
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        data = {}
        problem = f"{path}: {exc}; using the default settings."
    if data:
        try:
            settings = Settings.model_validate(data)
        except ValidationError as exc:
            problem = f"{path}: {first_error(exc)}; using the default settings."
    return settings.with_environment(), problem


def save_setting(key: str, value: str, path: Path | None = None) -> None:
    """Set one top-level setting (the theme picked in the app), keeping the rest of
    the file as it was: comments, order, quoting. Raises ConfigWriteError (an
    OSError) rather than overwrite a file it cannot read."""
    import tomlkit
    from tomlkit.exceptions import ParseError

    path = path or config_path()
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        text = ""
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigWriteError(f"cannot read {path} to update it: {exc}") from None
    try:
        document = tomlkit.parse(text)
    except ParseError as exc:
        raise ConfigWriteError(
            f"{path} is not valid TOML ({exc}): fix it, and the setting can be saved"
        ) from None
    document[key] = value  # a new key goes before the first table, where it belongs
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_text(path, tomlkit.dumps(document))
