"""What crosses the host boundary, as a host author expects it: per-run settings
that override the runner's field by field, a host's own error codes and next
actions, one-time secrets that stay in the CLI, byte limits, and runs that
cannot starve each other's host calls."""

from __future__ import annotations

import asyncio
import threading
import time
from typing import Any

import pytest

from run_repl import HostError, Limits, create_runner, requires_approval, run
from run_repl.sandbox.cli_only import requires_cli

SECRET = "s" * 40


async def test_per_run_limits_override_only_the_fields_they_set() -> None:
    runner = create_runner(limits=Limits(memory_bytes=8 << 20, max_log_lines=3))
    result = await runner.run(
        "for (let i = 0; i < 10; i++) console.log(i); 1", limits=Limits(timeout_ms=5000)
    )
    assert result.stats.memory_limit_bytes == 8 << 20
    assert len(result.logs) == 3 and result.logs_dropped == 7
    tighter = await runner.run("1", limits=Limits(memory_bytes=4 << 20))
    assert tighter.stats.memory_limit_bytes == 4 << 20
    assert runner.limits_for(Limits(timeout_ms=5)).model_dump() == {
        **runner.limits.model_dump(),
        "timeout_ms": 5,
    }


async def test_a_host_error_reaches_the_envelope_with_its_own_code_and_actions() -> None:
    def pay(amount: int) -> None:
        raise HostError(
            "Payment required",
            code="PAYMENT_REQUIRED",
            details={"amount": amount},
            next_actions=[
                {"type": "run_cli_command", "command": "billing topup 5", "why": "Top up first."}
            ],
        )

    result = await run("await billing.pay(5)", {"billing": {"pay": pay}})
    assert result.error is not None
    assert result.error.code == "PAYMENT_REQUIRED"
    assert result.error.message == "Payment required"
    actions = [a.model_dump() for a in result.error.next_actions]
    assert actions == [
        {"type": "run_cli_command", "command": "billing topup 5", "why": "Top up first."}
    ]
    (call,) = result.calls
    assert call.ok is False and call.error_code == "PAYMENT_REQUIRED"


async def test_a_host_error_without_actions_keeps_its_code_and_the_default_step() -> None:
    def pay() -> None:
        raise HostError("Payment required", code="PAYMENT_REQUIRED")

    result = await run("await billing.pay()", {"billing": {"pay": pay}})
    assert result.error is not None and result.error.code == "PAYMENT_REQUIRED"
    assert result.error.next_actions[0].type == "edit_request"


async def test_a_caught_host_error_shows_its_code_to_the_snippet_and_the_run_goes_on() -> None:
    def pay() -> None:
        raise HostError("Payment required", code="PAYMENT_REQUIRED", details={"amount": 5})

    result = await run(
        "try { await billing.pay() } catch (e) { return [e.code, e.hostCode, e.details.amount] }",
        {"billing": {"pay": pay}},
    )
    assert result.value == ["RUN_HOST_FUNCTION_ERROR", "PAYMENT_REQUIRED", 5]
    assert result.calls[0].error_code == "PAYMENT_REQUIRED"


async def test_a_one_time_secret_stays_in_the_cli() -> None:
    ran: list[str] = []

    @requires_cli(command=lambda project: f"myapp keys create --project {project}")
    def create_key(project: str) -> str:
        ran.append(project)
        return "sk_live_secret"

    result = await run('return await keys.create("prj_1")', {"keys": {"create": create_key}})
    assert ran == []
    assert result.error is not None and result.error.code == "SECRET_REQUIRES_CLI"
    (action,) = result.error.next_actions
    assert action.type == "run_cli_command"
    assert action.model_dump()["command"] == "myapp keys create --project prj_1"
    assert "sk_live" not in result.model_dump_json()
    assert result.calls[0].error_code == "SECRET_REQUIRES_CLI"
    assert result.stats.host_calls_executed == 0


async def test_a_host_result_over_the_limit_is_refused_before_it_is_encoded() -> None:
    def big() -> str:
        return "x" * (100 << 20)

    started = time.perf_counter()
    result = await run("await h.big()", {"h": {"big": big}})
    assert result.error is not None and result.error.code == "RUN_HOST_RESULT_TOO_LARGE"
    assert "max_host_result_bytes" in result.error.message
    assert result.error.next_actions[0].type == "edit_request"
    assert result.calls[0].error_code == "RUN_HOST_RESULT_TOO_LARGE"
    # The worker never saw the 100 MB (it would have needed far more than its heap).
    assert (result.stats.memory_peak_bytes or 0) < 100 << 20
    assert time.perf_counter() - started < 60  # sanity only; the speed is in bench/engine.py


async def test_a_host_result_under_the_limit_passes_and_rows_are_cut_where_they_go_over() -> None:
    def rows(n: int) -> list[dict[str, Any]]:
        return [{"id": i, "name": "n" * 20} for i in range(n)]

    ok = await run("(await h.rows(1000)).length", {"h": {"rows": rows}})
    assert ok.value == 1000
    over = await run(
        "(await h.rows(100000)).length",
        {"h": {"rows": rows}},
        limits=Limits(max_host_result_bytes=64 * 1024),
    )
    assert over.error is not None and over.error.code == "RUN_HOST_RESULT_TOO_LARGE"
    assert "$[" in over.error.message  # names where it went over


async def test_per_run_approvals_merge_over_the_runners() -> None:
    published: list[str] = []

    def publish(doc: str) -> str:
        published.append(doc)
        return doc

    hosts = {"documents": {"publish": publish}, "admin": {"wipe": lambda: "wiped"}}
    runner = create_runner(secret=SECRET, approvals={"admin.*": "deny"})
    asked = await runner.run(
        "await documents.publish('d1')", hosts, approvals={"documents.*": "ask"}
    )
    assert asked.status == "interrupted" and published == []
    still_denied = await runner.run(
        "try { await admin.wipe() } catch (e) { return e.code }",
        hosts,
        approvals={"documents.*": "ask"},
    )
    assert still_denied.value == "RUN_APPROVAL_DENIED"
    allowed = await runner.run("await admin.wipe()", hosts, approvals={"admin.wipe": "allow"})
    assert allowed.value == "wiped"
    with pytest.raises(ValueError, match="ask"):
        await runner.run("1", hosts, approvals={"x": "maybe"})


async def test_a_persons_denial_holds_even_if_the_resume_allows_the_path() -> None:
    moved: list[int] = []

    @requires_approval
    def transfer(amount: int) -> int:
        moved.append(amount)
        return amount

    runner = create_runner(secret=SECRET)
    hosts = {"bank": {"transfer": transfer}}
    source = "try { return await bank.transfer(5) } catch (e) { return e.code }"
    first = await runner.run(source, hosts)
    denied = await runner.run(
        source,
        hosts,
        continuation=first.continuation,
        resolutions=[{"interruption_id": first.interruptions[0].id, "value": False}],
        approvals={"bank.*": "allow"},
    )
    assert denied.value == "RUN_APPROVAL_DENIED" and moved == []


async def test_one_runs_sync_calls_cannot_starve_anothers() -> None:
    release = threading.Event()
    started = threading.Semaphore(0)
    count = [0]
    lock = threading.Lock()

    def block() -> int:
        with lock:
            count[0] += 1
        started.release()
        release.wait(30)
        return 1

    runner = create_runner(max_runs_in_flight=4)
    hog = asyncio.create_task(
        runner.run(
            "await Promise.all(Array.from({length: 64}, () => h.block()))",
            {"h": {"block": block}},
        )
    )
    for _ in range(32):
        await asyncio.to_thread(started.acquire, True, 30)
    try:
        quick = await asyncio.wait_for(
            runner.run("await h.quick()", {"h": {"quick": lambda: "done"}}), 20
        )
        assert quick.value == "done"
        await asyncio.sleep(0.2)
        with lock:
            assert count[0] == 32  # the hog has its 32 threads, and no more
    finally:
        release.set()
    assert (await hog).value == [1] * 64


async def test_a_misspelt_namespace_and_a_timer_get_help() -> None:
    hosts = {"store": {"listOrders": lambda c: []}}
    typo = await run('await strore.listOrders("c")', hosts)
    assert typo.error is not None and typo.error.code == "RUN_EXCEPTION"
    assert typo.error.did_you_mean == ["store"]
    assert "did you mean store?" in typo.error.message
    timer = await run("setTimeout(() => 1, 10)", hosts)
    assert timer.error is not None and "no timers" in timer.error.message


async def test_out_of_memory_never_names_null() -> None:
    result = await run(
        "const a = []; while (true) a.push(new Array(1e5).fill(1))",
        limits=Limits(memory_bytes=16 << 20),
    )
    assert result.error is not None and result.error.code == "RUN_MEMORY_EXCEEDED"
    assert result.error.name is None
    assert "name" not in result.error.model_dump()
