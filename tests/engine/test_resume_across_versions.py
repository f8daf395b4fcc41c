"""A continuation made by an older run-repl still resumes: the replay schedules
an awaited host call as the recorded run did, so calls made side by side come
in the recorded order and a person's decision is not stranded by an upgrade.

The fixture was made by run-repl at commit 403ce84, where awaiting a host call
took three QuickJS jobs (it takes one now); the snippet's two chains then made
their calls in another order than they do now."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from run_repl import get_host_function_context
from run_repl.sandbox.continuation import GUEST_RUNTIME, ContinuationSigner
from run_repl.sandbox.errors import ContinuationInvalid
from run_repl.sandbox.runner import Runner

FIXTURE = json.loads(
    (Path(__file__).parent / "fixtures" / "continuation_three_job_await.json").read_text()
)


def _hosts(published: list[str]) -> dict[str, Any]:
    async def f(x: int) -> int:
        return x

    async def publish(draft: str) -> str:
        ctx = get_host_function_context()
        if ctx.resume is None:
            ctx.interrupt({"kind": "approval", "message": f"Publish {draft}?"})
        published.append(draft)
        return f"published {draft}"

    return {"h": {"f": f}, "docs": {"publish": publish}}


def _calls(result: Any) -> list[tuple[int, str, str]]:
    return [(c.seq, c.path, c.args_preview) for c in result.calls]


async def _resume(runner: Runner, hosts: dict[str, Any], result: Any) -> Any:
    return await runner.run(
        FIXTURE["source"],
        hosts,
        continuation=result.continuation,
        resolutions=[{"interruption_id": i.id, "value": True} for i in result.interruptions],
    )


async def test_a_continuation_from_when_an_await_took_three_jobs_resumes_in_order() -> None:
    published: list[str] = []
    hosts = _hosts(published)
    runner = Runner(secret=FIXTURE["secret"])
    first = await runner.run(
        FIXTURE["source"],
        hosts,
        continuation=FIXTURE["token"],
        resolutions=[{"interruption_id": i, "value": True} for i in FIXTURE["pending"]],
    )
    assert first.status == "interrupted", first.error
    # The recorded calls, in the order the older run made them (2 before 3 was
    # made the other way round), then the new ones in that same manner.
    assert _calls(first) == [
        (1, "h.f", "(1)"),
        (2, "h.f", "(3)"),
        (3, "h.f", "(2)"),
        (4, "docs.publish", '("d23")'),
        (5, "h.f", "(4)"),
        (6, "h.f", "(6)"),
        (7, "h.f", "(5)"),
        (8, "docs.publish", '("e56")'),
    ]
    assert published == ["d23"]
    # Its own continuation keeps the older manner: the second decision resumes too.
    done = await _resume(runner, hosts, first)
    assert done.status == "ok", done.error
    assert done.value == ["published d23", "published e56"]
    assert published == ["d23", "e56"]  # each approved call ran once


async def test_a_run_made_now_awaits_in_one_job_and_resumes_so() -> None:
    published: list[str] = []
    hosts = _hosts(published)
    runner = Runner(secret=FIXTURE["secret"])
    first = await runner.run(FIXTURE["source"], hosts)
    assert first.status == "interrupted", first.error
    assert _calls(first) == [
        (1, "h.f", "(1)"),
        (2, "h.f", "(2)"),
        (3, "h.f", "(3)"),
        (4, "docs.publish", '("d23")'),
    ]
    second = await _resume(runner, hosts, first)
    assert second.status == "interrupted", second.error
    assert _calls(second)[4:] == [
        (5, "h.f", "(4)"),
        (6, "h.f", "(5)"),
        (7, "h.f", "(6)"),
        (8, "docs.publish", '("e56")'),
    ]
    done = await _resume(runner, hosts, second)
    assert done.status == "ok", done.error
    assert done.value == ["published d23", "published e56"]
    assert published == ["d23", "e56"]


@pytest.mark.parametrize("runtime", [0, 3, "2"])
def test_a_token_from_an_unknown_guest_runtime_is_refused(runtime: Any) -> None:
    signer = ContinuationSigner(FIXTURE["secret"].encode())
    token = signer.sign(
        source="1",
        manifest_digest="m",
        context=None,
        logical_run_id="run_x",
        seed=[1, 2, 3, 4],
        clock_ms=0,
        elapsed_ms=0.0,
        ledger=[],
        settle_order=[],
        interrupts=[],
        guest_runtime=runtime,
    )
    with pytest.raises(ContinuationInvalid, match="another version"):
        signer.verify(token, source="1", manifest_digest="m", context=None)


def test_tokens_say_how_their_run_awaited() -> None:
    signer = ContinuationSigner(FIXTURE["secret"].encode())
    made = {
        "source": "1",
        "manifest_digest": "m",
        "context": None,
        "logical_run_id": "run_x",
        "seed": [1, 2, 3, 4],
        "clock_ms": 0,
        "elapsed_ms": 0.0,
        "ledger": [],
        "settle_order": [],
        "interrupts": [],
    }
    now = signer.verify(signer.sign(**made), source="1", manifest_digest="m", context=None)
    older = signer.verify(
        signer.sign(**made, guest_runtime=1), source="1", manifest_digest="m", context=None
    )
    assert (now.guest_runtime, older.guest_runtime) == (GUEST_RUNTIME, 1)
