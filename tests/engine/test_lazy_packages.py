"""The engine's package `__init__`s load their names on first use, so a
sub-package (the child process's above all) imports without the rest."""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any

import run_repl.sandbox as sandbox


def _loaded_after(statement: str) -> dict[str, Any]:
    code = (
        f"import json, sys\n{statement}\n"
        "print(json.dumps({'modules': sorted(m for m in sys.modules if m.startswith('run_repl')),"
        " 'pydantic': 'pydantic' in sys.modules}))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    loaded: dict[str, Any] = json.loads(out)
    return loaded


def test_importing_the_worker_loads_only_the_child_and_the_errors() -> None:
    loaded = _loaded_after("import run_repl.sandbox.process.worker")
    modules = set(loaded["modules"])
    assert {m for m in modules if not m.startswith("run_repl.sandbox.process")} == {
        "run_repl",
        "run_repl.sandbox",
        "run_repl.sandbox.errors",
    }
    assert loaded["pydantic"] is False


def test_importing_the_package_loads_no_engine_module_until_a_name_is_used() -> None:
    assert _loaded_after("import run_repl.sandbox")["modules"] == ["run_repl", "run_repl.sandbox"]
    after = _loaded_after("from run_repl.sandbox import Limits")
    assert "run_repl.sandbox.limits" in after["modules"]
    assert "run_repl.sandbox.runner" not in after["modules"]


def test_every_public_name_resolves_to_its_home_module() -> None:
    assert set(sandbox.__all__) == set(sandbox._HOMES)
    for name in sandbox.__all__:
        value = getattr(sandbox, name)
        assert value is getattr(sys.modules[f"run_repl.sandbox.{sandbox._HOMES[name]}"], name)
    assert set(sandbox.__all__) <= set(dir(sandbox))


def test_a_sub_package_is_still_importable_by_name() -> None:
    from run_repl.sandbox import process, wire

    assert process.__name__ == "run_repl.sandbox.process"
    assert wire.__name__ == "run_repl.sandbox.wire"
