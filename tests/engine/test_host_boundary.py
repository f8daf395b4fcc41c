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
    assert "over it at $" in over.error.message  # says where (here, the list as a whole)


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


async def test_every_attempted_call_is_in_the_audit_and_on_call() -> None:
    # on_call sees every function call, refused ones included.
    seen: list[tuple[int, str, bool | None, str | None]] = []
    result = await run(
        "try { await s.nope() } catch {}\n"
        "try { await s.f(() => 1) } catch {}\n"
        "try { await s.f('x'.repeat(2000)) } catch {}\n"
        "await s.f(1); 1",
        {"s": {"f": lambda x=None: 1}},
        on_call=lambda c: seen.append((c.seq, c.path, c.ok, c.error_code)),
        limits=Limits(max_host_argument_bytes=1000),
    )
    assert result.status == "ok"
    assert [(c.seq, c.path, c.ok, c.error_code) for c in result.calls] == [
        (1, "s.nope", False, "RUN_UNKNOWN_MEMBER"),
        (2, "s.f", False, "RUN_ARGUMENT_NOT_CLONEABLE"),
        (3, "s.f", False, "RUN_ARGUMENT_TOO_LARGE"),
        (4, "s.f", True, None),
    ]
    assert [s for s in seen if s[2] is False] == [
        (1, "s.nope", False, "RUN_UNKNOWN_MEMBER"),
        (2, "s.f", False, "RUN_ARGUMENT_NOT_CLONEABLE"),
        (3, "s.f", False, "RUN_ARGUMENT_TOO_LARGE"),
    ]


async def test_arguments_are_bounded_per_call_and_per_run_in_the_sandbox() -> None:
    got: list[int] = []
    hosts = {"app": {"sink": lambda s: got.append(len(s)) or len(s)}}
    one = await run("await app.sink('x'.repeat(2 << 20))", hosts)
    assert one.error is not None and one.error.code == "RUN_ARGUMENT_TOO_LARGE"
    assert "max_host_argument_bytes" in one.error.message and got == []
    # Multi-byte text is counted in UTF-8 bytes, not characters.
    wide = await run(
        "await app.sink('é'.repeat(600))", hosts, limits=Limits(max_host_argument_bytes=1000)
    )
    assert wide.error is not None and wide.error.code == "RUN_ARGUMENT_TOO_LARGE"
    budget = await run(
        "const s = 'x'.repeat(100_000); for (;;) await app.sink(s)",
        hosts,
        limits=Limits(max_host_argument_bytes_per_run=1_000_000),
    )
    assert budget.error is not None and budget.error.code == "RUN_ARGUMENT_TOO_LARGE"
    assert "max_host_argument_bytes_per_run" in budget.error.message
    assert len([c for c in budget.calls if c.ok]) == 9  # 9 × 100,002 bytes fit in 1,000,000
    assert got == [100_000] * 9


async def test_values_are_frozen_globals_copied_in() -> None:
    import datetime as dt

    user = {"name": "ann", "roles": ["admin"]}
    files = [{"name": "a.txt", "size": 3, "at": dt.datetime(2024, 1, 2, tzinfo=dt.UTC)}]
    result = await run(
        """
        const changed = (() => { try { user.name = 'eve'; return 'changed' } catch (e) { return e.constructor.name } })()
        let pushed; try { user.roles.push('root'); pushed = 'pushed' } catch (e) { pushed = 'refused' }
        return [user.name, changed, pushed, files[0].at instanceof Date, files.length, typeof globalThis.user]
        """,
        values={"user": user, "files": files},
    )
    assert result.value == ["ann", "TypeError", "refused", True, 1, "object"]
    assert user == {"name": "ann", "roles": ["admin"]}  # the host's own object never changed


@pytest.mark.parametrize(
    "values, match",
    [
        ({"store": 1}, "also a host namespace"),
        ({"JSON": 1}, "reserved word or one of the sandbox's own globals"),
        ({"delete": 1}, "reserved word"),
        ({"not-a-name": 1}, "not a JavaScript identifier"),
        ({"x": lambda: 1}, "values.x"),
        ({"big": "x" * (5 << 20)}, "max_values_bytes"),
    ],
)
async def test_bad_values_are_refused_at_the_call(values: dict[str, Any], match: str) -> None:
    from run_repl import ValuesError

    with pytest.raises(ValuesError, match=match):
        await run("1", {"store": {"f": lambda: 1}}, values=values)


async def test_a_resume_must_see_the_same_values() -> None:
    @requires_approval
    def act() -> int:
        return 1

    runner = create_runner(secret=SECRET)
    hosts = {"h": {"act": act}}
    first = await runner.run("await h.act(); user.id", hosts, values={"user": {"id": 1}})
    answer = [{"interruption_id": first.interruptions[0].id, "value": True}]
    same = await runner.run(
        "await h.act(); user.id",
        hosts,
        continuation=first.continuation,
        resolutions=answer,
        values={"user": {"id": 1}},
    )
    assert same.value == 1
    other = await runner.run(
        "await h.act(); user.id",
        hosts,
        continuation=first.continuation,
        resolutions=answer,
        values={"user": {"id": 2}},
    )
    assert other.error is not None and other.error.code == "RUN_CONTINUATION_INVALID"
    assert "other values" in other.error.message


async def test_a_module_with_classes_constants_and_imports_is_a_host(tmp_path: Any) -> None:
    import importlib.util
    import sys

    (tmp_path / "mytools_host.py").write_text(
        "from dataclasses import dataclass\n"
        "from os.path import join\n"
        "LIMIT = 10\n"
        "@dataclass\n"
        "class Order:\n"
        "    id: str\n"
        "    amount: int\n"
        "def list_orders(customer_id: str) -> list[Order]:\n"
        "    return [Order('o1', 5)][:LIMIT]\n"
        "def _helper() -> None: ...\n"
    )
    spec = importlib.util.spec_from_file_location("mytools_host", tmp_path / "mytools_host.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["mytools_host"] = module
    spec.loader.exec_module(module)
    try:
        result = await run('await tools.list_orders("c")', {"tools": module})
        assert result.value == [{"id": "o1", "amount": 5}]
        from run_repl.sandbox.session.host_functions import build_manifest

        manifest = build_manifest({"tools": module})
        assert manifest.paths == ["tools.list_orders"]
        assert dict(manifest.skipped) == {
            "tools.LIMIT": "a constant (int)",
            "tools.Order": "a class",
            "tools.dataclass": "imported from dataclasses",
            "tools.join": "imported from posixpath",
        }
    finally:
        del sys.modules["mytools_host"]


@pytest.mark.parametrize("rows", [2, 3000])
async def test_large_other_fields_never_push_the_window_over_its_budget(rows: int) -> None:
    import json

    runner = create_runner()
    result = await runner.run(
        f'({{ tags: Array.from({{length: {rows}}}, (_, i) => "t" + i), '
        'config: Object.fromEntries(Array.from({length: 400}, (_, i) => ["k" + i, i])) })'
    )
    window = result.value_window
    assert window is not None
    lines = len(json.dumps(window.model_dump(), indent=2).splitlines())
    assert window.path == "$.tags" and result.total == rows
    assert window.rest is None and window.rest_omitted == ["config"]
    assert lines <= 200 + 10, lines  # the window's own few lines of framing aside
    page = runner.expand(result.value_ref, 0, 1)  # the omitted fields come with every page
    assert page.rest is not None and len(page.rest["config"]) == 400


async def test_small_other_fields_stay_beside_the_rows() -> None:
    result = await run("({ count: 3000, rows: Array.from({length: 3000}, (_, i) => ({ i })) })")
    assert result.value_window is not None and result.value_window.path == "$.rows"
    assert result.value_window.rest == {"count": 3000}
