"""One exception tree: every exception run-repl defines is a RunReplError (with a
stable `code`), except the few named below, which never leave the module that
raises them. The tree is drawn in run_repl/sandbox/errors.py's docstring."""

from __future__ import annotations

import importlib
import inspect
import pkgutil

import run_repl
from run_repl.sandbox.errors import RunReplError

# Control flow inside one module, caught where it is raised: never a caller's concern.
INTERNAL = {
    "Interrupt",  # a BaseException on purpose: a host function's `except Exception` must not catch it
    "GuardRefused",  # a host call's guard said no: turned into the call's error code
    "HandleProblem",  # a handle call that cannot go on: turned into the call's error
    "HandleMismatch",  # a replayed handle call that does not match: turned into a mismatch
    "_TooMany",  # json_data's count ran over: turned into a too-large error
    "_ConnectionLost",  # the PostgreSQL store's retry loop
    "NotDecoded",  # present.inspect: a value shown raw instead
    "SourceError",  # present.shell: a snippet file that cannot be read, worded by the CLI
    "PageUnavailable",  # the value panel's model: a page the store no longer has, shown as such
    "_HeadersTooBig",  # mcp.http_guard: stops httptools' parser; uvicorn answers 400
    "ExportCancelled",  # present.export: a cancelled export, said by its progress widget
}


def _modules() -> list[str]:
    names = [run_repl.__name__]
    for info in pkgutil.walk_packages(run_repl.__path__, run_repl.__name__ + "."):
        if info.name.rsplit(".", 1)[-1] != "__main__":  # running it is the program
            names.append(info.name)
    return names


def _exceptions() -> dict[str, type[BaseException]]:
    found: dict[str, type[BaseException]] = {}
    for name in _modules():
        module = importlib.import_module(name)
        for _, cls in inspect.getmembers(module, inspect.isclass):
            if (
                cls.__module__ == name
                and issubclass(cls, BaseException)
                and not issubclass(cls, Warning)  # warnings are not errors
            ):
                found[f"{name}.{cls.__qualname__}"] = cls
    return found


def test_every_exception_of_run_repl_is_a_run_repl_error_but_the_internal_ones() -> None:
    found = _exceptions()
    assert len(found) > 30  # the walk found the package's modules
    outside = sorted(
        where
        for where, cls in found.items()
        if not issubclass(cls, RunReplError) and cls.__name__ not in INTERNAL
    )
    assert not outside, f"put these under RunReplError (or name them in INTERNAL): {outside}"
    names = {cls.__name__ for cls in found.values()}
    assert not INTERNAL - names, f"INTERNAL names classes that are gone: {INTERNAL - names}"


def test_each_error_has_a_stable_code_and_its_drawing_in_the_tree() -> None:
    import run_repl.sandbox.errors as errors

    tree = errors.__doc__ or ""
    for where, cls in _exceptions().items():
        if not issubclass(cls, RunReplError) or cls.__name__.startswith("_"):
            continue  # a private one is its module's business
        assert cls.code, where
        assert f" {cls.__name__}" in tree, f"{where} is not drawn in sandbox/errors.py's tree"


def test_the_second_bases_are_kept_so_existing_except_clauses_still_catch() -> None:
    from run_repl.config import ConfigWriteError
    from run_repl.host.loader import HostLoadError
    from run_repl.host.upstream.spec import UpstreamSpecError
    from run_repl.mcp.http_auth import AuthConfigError
    from run_repl.paths import NotPrivate
    from run_repl.store import ApprovalConflict, ClaimLost, StoreError
    from run_repl.store.store_url import StoreUrlError
    from run_repl.tui.themes import ThemeFileError
    from run_repl.workspace import WorkspaceError

    assert issubclass(StoreError, RuntimeError) and issubclass(ApprovalConflict, RuntimeError)
    assert issubclass(ClaimLost, RuntimeError)
    assert issubclass(StoreUrlError, ValueError) and issubclass(UpstreamSpecError, ValueError)
    assert issubclass(ThemeFileError, ValueError)
    assert issubclass(ConfigWriteError, OSError) and issubclass(NotPrivate, PermissionError)
    for cls in (HostLoadError, WorkspaceError, AuthConfigError):
        assert issubclass(cls, RunReplError)
    denied = NotPrivate("/x is writable by others: chmod 700 /x")
    assert str(denied) == "/x is writable by others: chmod 700 /x" and denied.code
    busy = StoreError("The store is busy.", "busy")
    assert (
        busy.problem == "busy" and busy.code == "STORE_BUSY" and str(busy) == "The store is busy."
    )
