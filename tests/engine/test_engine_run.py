"""The engine's basic promises: a snippet runs, returns its value, logs, and calls hosts."""

from __future__ import annotations

import asyncio
import threading
import time

import pytest

from run_repl import LogLine, RunResult, run, run_sync


async def test_last_expression_is_the_value() -> None:
    result = await run("1 + 1")
    assert result.status == "ok"
    assert result.value == 2
    assert result.value_kind == "number"


async def test_explicit_return_and_top_level_await() -> None:
    result = await run("const v = await Promise.resolve(21)\nreturn v * 2")
    assert result.value == 42


async def test_undefined_is_reported_apart_from_null() -> None:
    undefined = await run("let x = 1")
    null = await run("null")
    assert undefined.value is None and undefined.value_kind == "undefined"
    assert null.value is None and null.value_kind == "null"
    assert undefined.model_dump()["value"] is None and "value" in undefined.model_dump()


async def test_typescript_runs_with_types_stripped() -> None:
    source = """
interface Order { id: string; amount: number }
const orders: Order[] = [{ id: "a", amount: 2 }, { id: "b", amount: 3 }]
function total<T extends Order>(xs: T[]): number { return xs.reduce((s, o) => s + o.amount, 0) }
total(orders as Order[])
"""
    result = await run(source)
    assert result.status == "ok", result.error
    assert result.value == 5


async def test_host_functions_sync_and_async() -> None:
    def list_orders(customer_id: str) -> list[dict[str, object]]:
        return [
            {"id": "o1", "customer": customer_id, "amount": 10},
            {"id": "o2", "customer": customer_id, "amount": 5},
        ]

    async def get_account(account_id: str) -> dict[str, str]:
        await asyncio.sleep(0)
        return {"id": account_id, "name": "Acme"}

    source = """
const orders = await store.listOrders("c1")
const account = await crm.getAccount("a1")
return { name: account.name, total: orders.reduce((s, o) => s + o.amount, 0) }
"""
    result = await run(
        source, {"store": {"listOrders": list_orders}, "crm": {"getAccount": get_account}}
    )
    assert result.status == "ok", result.error
    assert result.value == {"name": "Acme", "total": 15}
    assert [c.path for c in result.calls] == ["store.listOrders", "crm.getAccount"]
    assert all(c.ok for c in result.calls)
    assert result.calls[0].args_preview == '("c1")'


async def test_sync_host_functions_run_off_the_event_loop() -> None:
    import threading

    seen: list[str] = []

    def which_thread() -> str:
        seen.append(threading.current_thread().name)
        return "ok"

    result = await run("await app.which()", {"app": {"which": which_thread}})
    assert result.value == "ok"
    assert seen and seen[0] != threading.current_thread().name


async def test_concurrent_host_calls_overlap() -> None:
    # Each call waits for the other to have started: run one after the other, they never would.
    started = {1: asyncio.Event(), 2: asyncio.Event()}

    async def meet(x: int) -> int:
        started[x].set()
        await asyncio.wait_for(started[3 - x].wait(), 10)
        return x

    result = await run("await Promise.all([h.meet(1), h.meet(2)])", {"h": {"meet": meet}})
    assert result.value == [1, 2]


async def test_sync_host_calls_overlap_too() -> None:
    barrier = threading.Barrier(3, timeout=10)

    def meet(x: int) -> int:
        barrier.wait()  # all three threads at once, or BrokenBarrierError
        return x

    result = await run(
        "await Promise.all([h.meet(1), h.meet(2), h.meet(3)])", {"h": {"meet": meet}}
    )
    assert result.value == [1, 2, 3]


async def test_logs_stream_live_with_levels() -> None:
    seen: list[LogLine] = []
    got_before_end = asyncio.Event()

    async def checkpoint() -> None:
        # By the time the snippet calls us, its first line has already arrived.
        if seen:
            got_before_end.set()

    source = """
console.log("one", 1, {a: [1, 2]})
await h.checkpoint()
console.info("two"); console.warn("three"); console.error("four"); console.debug("five")
"""
    result = await run(source, {"h": {"checkpoint": checkpoint}}, on_log=seen.append)
    assert got_before_end.is_set()
    assert [line.level for line in result.logs] == ["log", "info", "warn", "error", "debug"]
    assert result.logs[0].text.startswith("one 1")
    assert [line.text for line in seen] == [line.text for line in result.logs]
    assert all(line.at_ms >= 0 for line in result.logs)


async def test_on_call_sees_each_call_start_and_end() -> None:
    events: list[tuple[int, str, bool | None]] = []

    def ping(n: int) -> int:
        return n

    result = await run(
        "await h.ping(1); await h.ping(2)",
        {"h": {"ping": ping}},
        on_call=lambda c: events.append((c.seq, c.path, c.ok)),
    )
    assert result.status == "ok"
    assert events == [
        (1, "h.ping", None),
        (1, "h.ping", True),
        (2, "h.ping", None),
        (2, "h.ping", True),
    ]


def test_run_sync() -> None:
    result = run_sync("[1, 2, 3].map((x) => x * 2)")
    assert isinstance(result, RunResult)
    assert result.value == [2, 4, 6]


async def test_nothing_survives_from_one_run_to_the_next() -> None:
    first = await run("globalThis.leak = 42; typeof leak")
    second = await run("typeof globalThis.leak")
    assert first.value == "number"
    assert second.value == "undefined"


async def test_guest_clock_and_random_are_available() -> None:
    result = await run(
        "({ now: Date.now(), d: new Date().getTime(), r: Math.random(), u: crypto.randomUUID() })"
    )
    value = result.value
    assert abs(value["now"] - time.time() * 1000) < 60_000
    assert 0 <= value["r"] < 1
    assert len(value["u"]) == 36 and value["u"][14] == "4"


@pytest.mark.parametrize(
    "source, expected",
    [
        ("typeof URL", "function"),
        ("typeof TextEncoder", "function"),
        ("typeof TextDecoder", "function"),
        ("typeof structuredClone", "function"),
        ("typeof crypto.randomUUID", "function"),
        ("typeof console.log", "function"),
        ("typeof setTimeout", "undefined"),
        ("typeof fetch", "undefined"),
        ("typeof WebAssembly", "undefined"),
        ("typeof SharedArrayBuffer", "undefined"),
        ("typeof Atomics", "undefined"),
        ("typeof eval", "undefined"),
        ("typeof require", "undefined"),
        ("typeof process", "undefined"),
    ],
)
async def test_globals(source: str, expected: str) -> None:
    result = await run(source)
    assert result.value == expected


async def test_a_log_line_arrives_while_the_snippet_still_computes() -> None:
    arrived: list[float] = []
    started = time.perf_counter()
    source = "console.log('first'); let x = 0; for (let i = 0; i < 2e7; i++) x += i; x"
    result = await run(source, on_log=lambda line: arrived.append(time.perf_counter() - started))
    assert result.status == "ok"
    # Lines go out in batches, but a batch waits at most a few milliseconds.
    assert arrived and arrived[0] < result.duration_ms / 1000 / 2


async def test_many_log_lines_keep_their_order_and_levels() -> None:
    from run_repl import Limits

    result = await run(
        "for (let i = 0; i < 3000; i++) (i % 2 ? console.warn : console.log)('n', i)",
        limits=Limits(max_log_lines=5000),
    )
    assert result.logs_total == 3000
    assert [line.text for line in result.logs[:3]] == ["n 0", "n 1", "n 2"]
    assert [line.level for line in result.logs[:2]] == ["log", "warn"]
