"""Names a host may not give its namespaces and functions: the guest's own globals
(every one QuickJS defines, and those the sandbox adds) and the names JavaScript
gives a meaning to on every object. Refused at the call that receives the host."""

from __future__ import annotations

import json

import _quickjs
import pytest

from run_repl import handle, run
from run_repl.sandbox.errors import HostFunctionsError, ValuesError
from run_repl.sandbox.session.host_functions import (
    RESERVED_GLOBALS,
    SPECIAL_MEMBERS,
    build_manifest,
)


def f() -> int:
    return 1


@pytest.mark.parametrize(
    "name",
    [
        "then",
        "__proto__",
        "constructor",
        "prototype",
        "toString",
        "valueOf",
        "hasOwnProperty",
        "toJSON",
        "InternalError",
        "queueMicrotask",
        "performance",
        "WeakRef",
        "console",
        "Math",
    ],
)
async def test_a_namespace_may_not_take_a_reserved_name(name: str) -> None:
    with pytest.raises(HostFunctionsError) as caught:
        await run("return 1", {name: {"call": f}})
    assert repr(name) in str(caught.value)
    assert caught.value.code == "RUN_HOST_FUNCTIONS_INVALID"
    # A bare function at the top is a global too.
    with pytest.raises(HostFunctionsError, match=repr(name).replace("$", r"\$")):
        build_manifest({name: f})


@pytest.mark.parametrize(
    ("name", "why"),
    [
        ("then", "await"),
        ("toJSON", "JSON.stringify"),
        ("__proto__", "prototype"),
        ("constructor", "Object.prototype"),
        ("prototype", "prototype"),
        ("toString", "Object.prototype"),
        ("valueOf", "Object.prototype"),
        ("__defineGetter__", "Object.prototype"),
    ],
)
def test_a_function_or_namespace_inside_may_not_take_a_special_name(name: str, why: str) -> None:
    for host in (
        {"tools": {name: f}},
        {"tools": {"deep": {name: f}}},
        {"tools": {name: {"call": f}}},
    ):
        with pytest.raises(HostFunctionsError) as caught:
            build_manifest(host)
        message = str(caught.value)
        assert repr(name) in message and why in message and "tools" in message


async def test_ordinary_names_and_words_reserved_only_at_the_top_still_work() -> None:
    host = {"tools": {"name": f, "length": f, "delete": f, "then_": f, "Math": f}}
    result = await run(
        "return [await tools.name(), await tools.length(), await tools.delete(), "
        "await tools.then_(), await tools.Math()]",
        host,
    )
    assert result.status == "ok" and result.value == [1, 1, 1, 1, 1]
    # And the namespace is no thenable: awaiting it gives it back, calling nothing.
    awaited = await run("return typeof (await tools)", host)
    assert awaited.value == "object" and awaited.calls == []


@pytest.mark.parametrize("name", ["then", "toString", "InternalError", "performance"])
async def test_a_value_may_not_take_a_reserved_name(name: str) -> None:
    with pytest.raises(ValuesError, match=repr(name)):
        await run("return 1", values={name: 1})


def test_every_global_of_the_engine_is_reserved() -> None:
    # The engine as the worker makes it, before the guest runtime hides some of them.
    ctx = _quickjs.Context()
    names = json.loads(ctx.eval("JSON.stringify(Object.getOwnPropertyNames(globalThis))"))
    assert "InternalError" in names and "Object" in names
    assert set(names) - RESERVED_GLOBALS == set()


async def test_every_global_and_object_name_of_the_guest_is_reserved() -> None:
    # The guest as a snippet sees it: the engine's globals and those the sandbox adds.
    result = await run(
        "return [Object.getOwnPropertyNames(globalThis), "
        "Object.getOwnPropertyNames(Object.prototype)]"
    )
    assert result.status == "ok", result.error
    globals_, object_names = result.value
    assert "console" in globals_ and "structuredClone" in globals_
    assert set(globals_) - RESERVED_GLOBALS == set()
    assert set(object_names) - SPECIAL_MEMBERS == set()
    assert {"then", "toJSON", "prototype"} <= SPECIAL_MEMBERS


async def test_a_handle_s_special_names_are_not_its_members() -> None:
    called: list[str] = []

    @handle
    class Project:
        def then(self, *args: object) -> None:
            called.append("then")

        def toJSON(self) -> None:
            called.append("toJSON")

        def deploy(self) -> str:
            return "deployed"

    async def project() -> Project:
        return Project()

    result = await run(
        "const p = await api.project(); JSON.stringify({p});"
        "return [typeof p.then, await p.deploy()]",
        {"api": {"project": project}},
    )
    assert result.status == "ok", result.error
    assert result.value == ["undefined", "deployed"]
    assert called == [] and [c.path for c in result.calls] == [
        "api.project",
        "api.project(…).deploy",
    ]
