"""Which host functions a front end runs against: the demo, or the user's own.

    load_host(None)                      # the demo host over SQLite
    load_host("myapp.agent:HOSTS")       # module:attribute
    load_host("tools/host.py")           # a file: its HOSTS, else the module itself
    load_host("tools/host.py:make_host") # a callable is called with no arguments

A bad spec is a HostLoadError whose message says, in one line, what is wrong.
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
import types
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..paths import data_dir
from ..sandbox.errors import RunReplError
from ..sandbox.session.host_functions import (
    HostFunctionsError,
    HostManifest,
    build_manifest,
    js_parameters,
)

DEMO = "demo"


class HostLoadError(RunReplError):
    """The --host spec could not be loaded; the message says why, in one line."""

    code = "HOST_LOAD_FAILED"


@dataclass
class LoadedHost:
    name: str  # what --host would say to load it again ("demo" for the demo)
    functions: Any
    manifest: HostManifest
    changed: list[Callable[[], None]] = field(default_factory=list)
    """Called (on any thread) after the functions changed: an upstream's tool list did."""

    @property
    def is_demo(self) -> bool:
        return self.name == DEMO


def load_host(
    spec: str | None,
    *,
    data_dir_override: str | None = None,
    warn: Callable[[str], None] | None = None,
) -> LoadedHost:
    """`warn` hears what the person should know (the demo's damaged database kept aside)."""
    if spec is None or spec == DEMO:
        from .demo import make_demo_host

        functions = make_demo_host(data_dir(data_dir_override), warn=warn)
        return LoadedHost(DEMO, functions, build_manifest(functions))
    obj = _resolve(spec)
    if callable(obj) and not isinstance(obj, type | types.ModuleType | dict):
        try:
            obj = obj()
        except Exception as exc:
            raise HostLoadError(
                f"--host {spec}: calling it to make the host failed: {type(exc).__name__}: {exc}"
            ) from exc
    try:
        manifest = build_manifest(obj)
    except HostFunctionsError as exc:
        raise HostLoadError(f"--host {spec}: {exc}") from exc
    if not manifest.functions:
        raise HostLoadError(f"--host {spec}: it has no public functions to offer the sandbox.")
    return LoadedHost(spec, obj, manifest)


def _resolve(spec: str) -> Any:
    target, _, attr = spec.partition(":")
    if target.endswith(".py") or "/" in target or "\\" in target:
        module = _load_file(spec, Path(target))
        if not attr:
            return getattr(module, "HOSTS", module)
    else:
        if not target or not all(part.isidentifier() for part in target.split(".")):
            raise HostLoadError(
                f"--host {spec}: expected package.module:attribute or a path to a .py file."
            )
        try:
            module = importlib.import_module(target)
        except ModuleNotFoundError as exc:
            raise HostLoadError(
                f"--host {spec}: no module named {exc.name!r} (is it installed, or on PYTHONPATH?)."
            ) from exc
        except Exception as exc:
            raise HostLoadError(
                f"--host {spec}: importing {target} failed: {type(exc).__name__}: {exc}"
            ) from exc
        if not attr:
            return module
    obj: Any = module
    for part in attr.split("."):
        if not hasattr(obj, part):
            raise HostLoadError(f"--host {spec}: {target} has no attribute {attr!r}.")
        obj = getattr(obj, part)
    if not (callable(obj) or isinstance(obj, dict | types.ModuleType) or hasattr(obj, "__dict__")):
        raise HostLoadError(
            f"--host {spec}: {attr} is a {type(obj).__name__}, not functions or a namespace of them."
        )
    return obj


def _load_file(spec: str, path: Path) -> types.ModuleType:
    if not path.is_file():
        raise HostLoadError(f"--host {spec}: no such file {path}.")
    name = "run_repl_host_" + path.stem
    module_spec = importlib.util.spec_from_file_location(name, path)
    if module_spec is None or module_spec.loader is None:
        raise HostLoadError(f"--host {spec}: {path} is not a Python file.")
    module = importlib.util.module_from_spec(module_spec)
    sys.modules[name] = module
    # Its own directory first, so a host file can import its neighbours.
    sys.path.insert(0, str(path.resolve().parent))
    try:
        module_spec.loader.exec_module(module)
    except Exception as exc:
        raise HostLoadError(
            f"--host {spec}: running {path} failed: {type(exc).__name__}: {exc}"
        ) from exc
    return module


@dataclass(frozen=True)
class FunctionInfo:
    """One host function as help, completion and catalogs show it."""

    path: str  # "crm.getAccount"
    js_signature: str  # "crm.getAccount(accountId, limit?)": how a snippet calls it
    python_signature: str  # "(account_id: str, limit: int = 10) -> dict"
    doc: str  # the docstring, cleaned ("" when there is none)
    is_async: bool
    needs_approval: bool

    @property
    def summary(self) -> str:
        """The docstring's first non-blank line."""
        for line in self.doc.splitlines():
            if line.strip():
                return line.strip()
        return ""

    def to_json(self) -> dict[str, Any]:
        """The shape of `run-repl host --json`."""
        return {
            "path": self.path,
            "signature": self.js_signature,
            "python_signature": self.python_signature,
            "doc": self.doc,
            "async": self.is_async,
            "needs_approval": self.needs_approval,
        }


def describe(host: LoadedHost) -> list[FunctionInfo]:
    """Each host function with its signatures and docstring, in the manifest's order."""
    return [
        FunctionInfo(
            path=path,
            js_signature=path + getattr(fn.fn, "__run_repl_parameters__", js_parameters(fn.fn)),
            python_signature=fn.signature,
            doc=fn.doc,
            is_async=fn.is_async,
            needs_approval=fn.approval is not None,
        )
        for path, fn in host.manifest.functions.items()
    ]
