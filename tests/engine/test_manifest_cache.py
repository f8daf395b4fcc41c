"""The host manifest is built once per host, and a host whose functions change is seen.

An upstream MCP host replaces a namespace's functions in place when its tool list
changes (run_repl/host/upstream/hosts.py): the next run must call the new ones."""

from __future__ import annotations

import types
from typing import Any

from run_repl import create_runner, requires_approval
from run_repl.sandbox.session.host_functions import manifest_of

SECRET = "m" * 40


def one() -> int:
    return 1


def two() -> int:
    return 2


def test_the_same_host_unchanged_gets_the_manifest_it_got() -> None:
    host = {"a": {"one": one, "two": two}}
    first = manifest_of(host)
    assert manifest_of(host) is first
    assert sorted(first.functions) == ["a.one", "a.two"]
    # An equal host that is another object is a host of its own.
    other = {"a": {"one": one, "two": two}}
    assert manifest_of(other).functions.keys() == first.functions.keys()


def test_a_host_changed_in_place_gets_a_fresh_manifest() -> None:
    inner: dict[str, Any] = {"one": one}
    host: dict[str, Any] = {"a": inner}
    assert list(manifest_of(host).functions) == ["a.one"]
    inner["two"] = two  # a function added to a namespace
    assert list(manifest_of(host).functions) == ["a.one", "a.two"]
    host["a"] = {"three": one}  # a namespace replaced, as an upstream's tool list change does
    assert list(manifest_of(host).functions) == ["a.three"]
    host["a"]["three"] = two  # the same name, another function
    assert manifest_of(host).functions["a.three"].fn is two
    host["b"] = {}
    host["a"] = {}  # a name moved between levels, same objects elsewhere
    assert manifest_of(host).functions == {}
    assert manifest_of(host).tree == {"a": {}, "b": {}}


def test_a_mark_given_after_the_first_run_is_seen() -> None:
    def publish() -> str:
        return "published"

    host = {"docs": {"publish": publish}}
    assert manifest_of(host).functions["docs.publish"].approval is None
    requires_approval(idempotent=True)(publish)
    fn = manifest_of(host).functions["docs.publish"]
    assert fn.approval is not None and fn.idempotent


def test_a_module_host_changed_in_place_gets_a_fresh_manifest() -> None:
    module = types.ModuleType("fake_host_module")
    module.one = one  # type: ignore[attr-defined]
    one_here = types.FunctionType(one.__code__, {}, "one")
    one_here.__module__ = "fake_host_module"
    module.one = one_here  # type: ignore[attr-defined]
    assert list(manifest_of(module).functions) == ["one"]
    two_here = types.FunctionType(two.__code__, {}, "two")
    two_here.__module__ = "fake_host_module"
    module.two = two_here  # type: ignore[attr-defined]
    assert sorted(manifest_of(module).functions) == ["one", "two"]
    module.__all__ = ["two"]  # type: ignore[attr-defined]
    assert list(manifest_of(module).functions) == ["two"]
    module.__all__.append("one")  # type: ignore[attr-defined]  # the same list, grown
    assert sorted(manifest_of(module).functions) == ["one", "two"]


def test_an_object_host_is_read_on_every_run() -> None:
    class Api:
        def ping(self) -> str:
            return "pong"

    api = Api()
    host = {"api": api}
    assert list(manifest_of(host).functions) == ["api.ping"]
    Api.pong = lambda self: "ping"  # type: ignore[attr-defined]
    assert sorted(manifest_of(host).functions) == ["api.ping", "api.pong"]


async def test_runs_call_the_host_as_it_is_now() -> None:
    runner = create_runner(secret=SECRET)
    host: dict[str, Any] = {"up": {"tool": one}}
    first = await runner.run("return await up.tool()", host)
    assert first.value == 1
    host["up"] = {"tool": two, "more": one}  # the upstream's tools changed
    second = await runner.run("return [await up.tool(), await up.more()]", host)
    assert second.status == "ok", second.error
    assert second.value == [2, 1]
    del host["up"]["more"]
    gone = await runner.run("return await up.more()", host)
    assert gone.status == "error"
    assert gone.error is not None and "more" in gone.error.message
