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
from run_repl.sandbox.errors import ContinuationInvalid
from run_repl.sandbox.resume.continuation import GUEST_RUNTIME, Checkpoint, ContinuationSigner
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


def _made(first_seq: int, *args: int, draft: str) -> list[tuple[int, str, str]]:
    """Calls h.f(arg) for each arg, numbered from `first_seq`, then the publish."""
    calls = [(first_seq + i, "h.f", f"({x})") for i, x in enumerate(args)]
    return [*calls, (first_seq + len(args), "docs.publish", f'("{draft}")')]


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
    assert _calls(first) == _made(1, 1, 3, 2, draft="d23") + _made(5, 4, 6, 5, draft="e56")
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
    assert _calls(first) == _made(1, 1, 2, 3, draft="d23")
    second = await _resume(runner, hosts, first)
    assert second.status == "interrupted", second.error
    assert _calls(second)[4:] == _made(5, 4, 5, 6, draft="e56")
    done = await _resume(runner, hosts, second)
    assert done.status == "ok", done.error
    assert done.value == ["published d23", "published e56"]
    assert published == ["d23", "e56"]


SIGNER = ContinuationSigner(FIXTURE["secret"].encode())
# An empty run's token: only how it awaited differs from one to the next.
EMPTY_RUN: dict[str, Any] = {
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


def _verified(token: str) -> Any:
    return SIGNER.verify(token, source="1", manifest_digest="m", context=None)


@pytest.mark.parametrize("runtime", [0, 3, "2"])
def test_a_token_from_an_unknown_guest_runtime_is_refused(runtime: Any) -> None:
    token = SIGNER.sign(Checkpoint(**EMPTY_RUN, guest_runtime=runtime))
    with pytest.raises(ContinuationInvalid, match="another version"):
        _verified(token)


def test_tokens_say_how_their_run_awaited() -> None:
    now = _verified(SIGNER.sign(Checkpoint(**EMPTY_RUN)))
    older = _verified(SIGNER.sign(Checkpoint(**EMPTY_RUN, guest_runtime=1)))
    assert (now.guest_runtime, older.guest_runtime) == (GUEST_RUNTIME, 1)
