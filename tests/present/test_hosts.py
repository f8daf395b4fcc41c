"""A host's functions as typed objects, and in words."""

from __future__ import annotations

import dataclasses
import inspect

import pytest

from run_repl.host.loader import FunctionInfo, LoadedHost, describe
from run_repl.present import function_lines, function_meta, plain_lines
from run_repl.sandbox.approval import requires_approval
from run_repl.sandbox.session.host_functions import build_manifest


def greet(name: str, punctuation: str = "!") -> str:
    """Say hello.

    More words."""
    return f"hello {name}{punctuation}"


@requires_approval
async def publish(draft_id: str) -> dict:
    return {"published": draft_id}


def host() -> LoadedHost:
    functions = {"app": {"greet": greet}, "docs": {"publish": publish}}
    return LoadedHost("myhost.py", functions, build_manifest(functions))


def test_describe_gives_frozen_function_infos() -> None:
    greet_info, publish_info = describe(host())
    assert greet_info == FunctionInfo(
        path="app.greet",
        js_signature="app.greet(name, punctuation?)",
        python_signature=str(inspect.signature(greet)),
        doc="Say hello.\n\nMore words.",
        is_async=False,
        needs_approval=False,
    )
    assert greet_info.summary == "Say hello."
    assert publish_info.is_async and publish_info.needs_approval and publish_info.summary == ""
    with pytest.raises(dataclasses.FrozenInstanceError):
        greet_info.path = "x"  # type: ignore[misc]
    assert publish_info.to_json() == {
        "path": "docs.publish",
        "signature": "docs.publish(draft_id)",
        "python_signature": str(inspect.signature(publish)),
        "doc": "",
        "async": True,
        "needs_approval": True,
    }


def test_function_words() -> None:
    infos = describe(host())
    assert function_meta(infos[0]) == "app.greet(name, punctuation?) — Say hello."
    assert function_meta(infos[1]) == "docs.publish(draft_id) (needs approval)"
    full = plain_lines(function_lines("myhost.py", infos))
    assert "  app.greet(name, punctuation?)\n      python: (name: " in full
    assert "      More words." in full
    assert "  docs.publish(draft_id)  async  needs approval" in full
    short = plain_lines(function_lines("myhost.py", infos, full=False))
    assert "python:" not in short and "      Say hello." in short and "More words" not in short
