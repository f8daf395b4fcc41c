"""One nesting limit for values that cross the sandbox: a value at it runs and
serializes; one past it fails the run (or its page) with where, the same on
every Python; never an ok result that a store or front end cannot write."""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any

import pytest

from run_repl import create_runner
from run_repl.sandbox.approval import requires_approval
from run_repl.sandbox.errors import CodecError
from run_repl.sandbox.result import RunResult
from run_repl.sandbox.wire.codec import decode, encode
from run_repl.sandbox.wire.nesting import MAX_DEPTH, ValueTooDeep, check_depth


def nested_js(levels: int) -> str:
    """A JS expression: `levels` arrays, one inside the other."""
    return f"(() => {{ let a = []; for (let i = 1; i < {levels}; i++) a = [a]; return a }})()"


def nested(levels: int) -> list[Any]:
    value: list[Any] = []
    for _ in range(levels - 1):
        value = [value]
    return value


def depth_of(value: Any) -> int:
    depth = 0
    while isinstance(value, list):
        depth, value = depth + 1, value[0] if value else None
    return depth


@pytest.mark.parametrize(
    "source, item_levels",
    [
        (f"return {nested_js(MAX_DEPTH)}", MAX_DEPTH - 1),
        (f"return {{ x: {nested_js(MAX_DEPTH - 1)} }}", MAX_DEPTH - 2),
        (f"return [{nested_js(MAX_DEPTH - 1)}, ...Array(1500).fill(0)]", MAX_DEPTH - 1),
        (f"return {{ rows: [{nested_js(MAX_DEPTH - 2)}, ...Array(1500).fill(0)] }}", MAX_DEPTH - 2),
    ],
    ids=["whole", "member", "chunked", "chunked member"],
)
async def test_a_value_at_the_limit_runs_and_serializes(source: str, item_levels: int) -> None:
    result = await create_runner().run(source)
    assert result.status == "ok", result.error
    # What a store, --json and the MCP server do with it:
    dumped = json.loads(result.model_dump_json())
    # Too tall to show inline: the window holds the array's (or member's) first item.
    assert depth_of(dumped["value_window"]["items"][0]) == item_levels


@pytest.mark.parametrize("levels", [MAX_DEPTH + 1, 254, 300, 1200, 3000])
@pytest.mark.parametrize("shape", ["whole", "member", "chunked"])
async def test_a_value_past_the_limit_fails_the_run_with_where(levels: int, shape: str) -> None:
    deep = nested_js(levels)
    source = {
        "whole": f"return {deep}",
        "member": f"return {{ x: {deep} }}",
        "chunked": f"return [{deep}, ...Array(1500).fill(0)]",
    }[shape]
    result = await create_runner().run(source)
    assert result.status == "error" and result.error is not None
    assert result.error.code == "RUN_VALUE_NOT_SERIALIZABLE"
    assert f"{MAX_DEPTH} levels" in result.error.message
    where = {"whole": "$[0][0]", "member": "$.x[0]", "chunked": "$[0][0]"}[shape]
    assert f"(at {where}" in result.error.message
    assert result.error.path is not None and result.error.path.startswith(where)
    [action] = result.error.next_actions
    assert action.path == result.error.path and "flattened" in action.why  # type: ignore[attr-defined]
    result.model_dump_json()  # the failed run itself is always writable


async def test_a_deep_item_in_a_later_chunk_fails_its_page_not_the_others() -> None:
    runner = create_runner()
    result = await runner.run(f"return [...Array(1500).fill(0), {nested_js(MAX_DEPTH + 5)}]")
    assert result.status == "ok" and result.value_ref is not None
    assert runner.expand(result.value_ref, 1000, 10).items == [0] * 10
    with pytest.raises(ValueTooDeep) as caught:
        runner.expand(result.value_ref, 1490, 20)
    assert caught.value.code == "RUN_VALUE_NOT_SERIALIZABLE"
    assert caught.value.path.startswith("$[1500][0][0]")
    assert caught.value.next_actions[0]["path"] == caught.value.path


async def test_host_call_arguments_and_results_keep_the_same_limit() -> None:
    seen: list[Any] = []

    def take(x: Any) -> int:
        seen.append(x)
        return 1

    hosts = {"h": {"take": take, "give": lambda n: nested(n)}}
    runner = create_runner()
    ok = await runner.run(f"return await h.take({nested_js(MAX_DEPTH)})", hosts)
    assert ok.status == "ok" and depth_of(seen[0]) == MAX_DEPTH
    ok.model_dump_json()
    refused = await runner.run(f"return await h.take({nested_js(MAX_DEPTH + 1)})", hosts)
    assert refused.status == "error" and refused.error is not None
    assert refused.error.code == "RUN_ARGUMENT_NOT_CLONEABLE"
    assert f"{MAX_DEPTH} levels" in refused.error.message
    assert len(seen) == 1  # the function never saw it
    given = await runner.run(f"return await h.give({MAX_DEPTH + 1})", hosts)
    assert given.status == "error" and given.error is not None
    assert f"{MAX_DEPTH} levels" in given.error.message
    # A host value at the limit crosses; wrapped once more by the snippet, it is refused.
    wrapped = await runner.run(f"return [await h.give({MAX_DEPTH})]", hosts)
    assert wrapped.status == "error" and wrapped.error is not None
    assert wrapped.error.code == "RUN_VALUE_NOT_SERIALIZABLE"


async def test_an_approval_of_an_argument_at_the_limit_is_asked_whole_and_resumes() -> None:
    # The policy's payload holds the arguments two levels down ({"args": [...]}).
    paid: list[Any] = []

    @requires_approval
    def pay(x: Any) -> int:
        paid.append(x)
        return 1

    hosts = {"h": {"pay": pay}}
    runner = create_runner(secret=b"s" * 32)
    source = f"return await h.pay({nested_js(MAX_DEPTH)})"
    first = await runner.run(source, hosts)
    assert first.status == "interrupted", first.error
    [question] = first.interruptions or []
    assert question.payload["kind"] == "approval" and question.payload["message"]
    assert depth_of(question.args[0]) == MAX_DEPTH == depth_of(question.payload["args"][0])
    first.model_dump_json()
    done = await runner.run(
        source,
        hosts,
        continuation=first.continuation,
        resolutions=[{"interruption_id": question.id, "value": True}],
    )
    assert done.status == "ok" and done.value == 1, done.error
    assert len(paid) == 1 and depth_of(paid[0]) == MAX_DEPTH


def test_the_codec_refuses_a_deep_wire_text_whoever_wrote_it() -> None:
    assert depth_of(decode(encode(nested(MAX_DEPTH)))) == MAX_DEPTH
    forged = "J" + "[" * (MAX_DEPTH + 1) + "]" * (MAX_DEPTH + 1)  # not through the prelude
    with pytest.raises(CodecError) as caught:
        decode(forged)
    assert caught.value.path.startswith("$[0][0]")


def shared_levels(levels: int) -> str:
    """A JS expression: `levels` arrays, each holding the next one twice (a DAG
    whose walk as a tree would visit 2 ** levels arrays)."""
    return f"(() => {{ let x = [1]; for (let i = 1; i < {levels}; i++) x = [x, x]; return x }})()"


PAD = "Array.from({ length: 300 }, () => [])"  # brackets enough to need a real check


# Hosts for snippets run in a child process: a parent that hangs on an argument must
# fail the test (the child is killed after 30 s), not hang the suite (a thread
# stuck in C code holds the GIL, so the test could not even fail).
CHILD = """
import asyncio, json, sys
from run_repl import create_runner
from run_repl.sandbox.approval import requires_approval
from run_repl.sandbox.approval import requires_approval
from run_repl.sandbox.context import get_host_function_context

seen = []

def take(x, pad):
    seen.append(x)
    return len(pad)

@requires_approval
def pay(x):
    seen.append(x)
    return 1

def ask(x, n):
    get_host_function_context().interrupt({"why": "big"})
    return 1

hosts = {"h": {"take": take, "pay": pay, "ask": ask}}
result = asyncio.run(create_runner(secret=b"s" * 32).run(sys.argv[1], hosts))
shared = [
    bool(isinstance(x, dict) and x.get("self") is x)
    or bool(isinstance(x, list) and len(x) == 2 and x[0] is x[1])
    for x in seen
]
print(json.dumps({"result": json.loads(result.model_dump_json()), "shared": shared}))
"""


def run_in_child(source: str) -> tuple[RunResult, list[bool]]:
    """The run's result, and for each value a host function took, whether it kept
    its shared parts (a cycle, or one array twice)."""
    try:
        done = subprocess.run(
            [sys.executable, "-c", CHILD, source],
            capture_output=True,
            text=True,
            timeout=30,
            check=True,
        )
    except subprocess.TimeoutExpired:
        pytest.fail("the parent was still busy with an argument after 30 s")
    out = json.loads(done.stdout)
    return RunResult.model_validate(out["result"]), out["shared"]


@pytest.mark.slow
def test_shared_and_cyclic_arguments_still_cross_quickly() -> None:
    cyclic, shared = run_in_child(
        f"const a = {{ n: 1 }}; a.self = a; return await h.take(a, {PAD})"
    )
    assert cyclic.status == "ok", cyclic.error
    assert shared == [True]
    # Checked as the tree the wire text is, not as the graph it decodes to: a walk of
    # the graph would visit 2 ** 40 arrays, and the parent's loop would never come back.
    dag, shared = run_in_child(f"return await h.take({shared_levels(40)}, {PAD})")
    assert dag.status == "ok", dag.error
    assert shared == [True]


@pytest.mark.slow
def test_an_approval_whose_arguments_cannot_be_shown_whole_is_refused_unasked() -> None:
    # Written out as JSON for the question, a value with shared parts grows as
    # 2 ** levels: 22 levels took 10 s of the parent's loop, 40 would never end.
    result, taken = run_in_child(f"return await h.pay({shared_levels(40)})")
    assert result.status == "error" and result.error is not None
    assert result.error.code == "RUN_APPROVAL_DENIED"
    assert "too many to show a person" in result.error.message
    [call] = result.calls
    assert call.decision == "refused" and taken == []  # the function did not run
    # Arguments that share a few parts are still asked about, whole.
    small, _ = run_in_child(f"return await h.pay({shared_levels(5)})")
    assert small.status == "interrupted"
    [question] = small.interruptions or []
    assert question.args[0][0] == question.args[0][1]  # written out twice, as JSON does


@pytest.mark.slow
def test_a_function_that_asks_itself_shows_such_an_argument_with_its_repeats_marked() -> None:
    result, _ = run_in_child(f"return await h.ask({shared_levels(40)}, 7)")
    assert result.status == "interrupted", result.error
    [question] = result.interruptions or []
    dag, seven = question.args
    # Still data, written once: each array's second use names where it was written.
    assert isinstance(dag, list) and dag[1] == "[Shared $[0]]"
    assert dag[0][1] == "[Shared $[0][0]]" and len(json.dumps(dag)) < 5_000
    assert seven == 7 and question.payload == {"why": "big"}


def test_check_depth_counts_levels_of_arrays_and_objects() -> None:
    check_depth(nested(MAX_DEPTH))
    check_depth({"a": [{"b": 1}]}, 3)
    with pytest.raises(ValueTooDeep) as caught:
        check_depth({"a": [1, {"b c": [[]]}], "z": []}, 4)
    assert caught.value.path == '$.a[1]["b c"][0]'
    with pytest.raises(ValueTooDeep) as caught:
        check_depth(nested(MAX_DEPTH + 1))
    # A long path keeps both ends and says how much is left out.
    hidden = MAX_DEPTH - 16  # steps to the container past the limit, less 8 at each end
    assert caught.value.path == "$" + "[0]" * 8 + f"…({hidden} more)…" + "[0]" * 8
    # A long flat value passes.
    check_depth(list(range(10_000)), text=json.dumps(list(range(10_000))))
