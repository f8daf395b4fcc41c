"""An interruption's payload (and its call's arguments) reach the envelope as data,
part by part, whatever JavaScript values they hold; the resumed host function
gets the payload back exactly as it was written."""

from __future__ import annotations

import datetime as dt
import json
from typing import Any

from run_repl import (
    JSBigInt,
    JSMap,
    JSRegExp,
    create_runner,
    get_host_function_context,
    requires_approval,
)
from run_repl.sandbox.values import UNDEFINED, JSError

SECRET = "p" * 40
WHEN = dt.datetime(2024, 5, 6, 7, 8, 9, tzinfo=dt.UTC)


def _rich_payload() -> dict[str, Any]:
    shared = [1]
    payload: dict[str, Any] = {
        "kind": "review",
        "exact": JSBigInt(7),
        "huge": JSBigInt(2**70),
        "when": WHEN,
        "tags": {"a"},
        "map": JSMap([("k", 1), (2, "two")]),
        "pattern": JSRegExp("a+", "gi"),
        "nothing": UNDEFINED,
        "raw": b"\x01\x02",
        "twice": [shared, shared],
        "error": JSError("TypeError", "bad input"),
        "nested": {"deeper": {}},
    }
    payload["self"] = payload
    payload["nested"]["deeper"]["up"] = payload["nested"]
    return payload


async def test_a_rich_payload_is_kept_as_data_and_comes_back_whole_on_resume() -> None:
    runner = create_runner(secret=SECRET)
    resumed: list[Any] = []

    def ask() -> str:
        ctx = get_host_function_context()
        if ctx.resume is None:
            ctx.interrupt(_rich_payload())
        resumed.append(ctx.resume.payload)
        return "done"

    hosts = {"t": {"ask": ask}}
    first = await runner.run("return await t.ask()", hosts)
    assert first.status == "interrupted"
    payload = first.interruptions[0].payload
    assert isinstance(payload, dict), payload
    assert payload["kind"] == "review"
    assert payload["exact"] == 7 and payload["huge"] == 2**70
    assert payload["when"] == "2024-05-06T07:08:09+00:00"
    assert payload["tags"] == ["a"]
    assert payload["map"] == [["k", 1], [2, "two"]]
    assert payload["pattern"] == "/a+/gi"
    assert payload["nothing"] is None
    assert payload["raw"] == [1, 2]
    assert payload["twice"] == [[1], [1]]  # a shared part is written out where it is used
    assert payload["error"] == {"name": "TypeError", "message": "bad input"}
    assert payload["self"] == "[Circular $]"
    assert payload["nested"] == {"deeper": {"up": "[Circular $.nested]"}}

    # The envelope is JSON, and reads back the same.
    for dumped in (first.model_dump(), first.model_dump(mode="json")):
        text = json.dumps(dumped)
        back = json.loads(text)["interruptions"][0]["payload"]
        assert back["huge"] == 2**70 and back["self"] == "[Circular $]"
        assert back["map"] == [["k", 1], [2, "two"]]

    done = await runner.run(
        "return await t.ask()",
        hosts,
        continuation=first.continuation,
        resolutions=[{"interruption_id": first.interruptions[0].id, "value": True}],
    )
    assert done.status == "ok" and done.value == "done"
    (again,) = resumed
    # The host function gets back what it wrote: the same types, the cycles kept.
    assert type(again["exact"]) is JSBigInt and again["exact"] == 7
    assert again["huge"] == 2**70 and again["when"] == WHEN
    assert again["self"] is again
    assert again["nested"]["deeper"]["up"] is again["nested"]
    assert isinstance(again["map"], JSMap) and again["map"][2] == "two"
    assert again["twice"][0] is again["twice"][1]


async def test_an_approval_of_a_call_with_rich_arguments_is_shown_as_data() -> None:
    runner = create_runner(secret=SECRET)

    @requires_approval(message="Publish it?")
    def publish(doc: Any, extra: Any, n: Any) -> str:
        return "published"

    # (A cycle in the arguments is refused without asking: it cannot be written out whole.)
    source = (
        "const part = {title: 'x'}; const doc = {a: part, b: part, when: new Date(0)};"
        "return await t.publish(doc, new Map([[1, new Set(['a'])]]), 10n)"
    )
    first = await runner.run(source, {"t": {"publish": publish}})
    assert first.status == "interrupted"
    question = first.interruptions[0]
    assert isinstance(question.payload, dict), question.payload
    assert question.payload["kind"] == "approval"
    assert question.payload["message"] == "Publish it?"
    doc = {"a": {"title": "x"}, "b": {"title": "x"}, "when": "1970-01-01T00:00:00+00:00"}
    assert question.payload["args"] == [doc, [[1, ["a"]]], 10]
    assert question.args == [doc, [[1, ["a"]]], 10]
    json.dumps(first.model_dump())
