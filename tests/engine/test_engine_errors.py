"""Every failure has a stable code, a message, the user's line and column, and one next step."""

from __future__ import annotations

import asyncio

import pytest

from run_repl import HostError, JSMap, Limits, create_runner, get_host_function_context, run


def action_types(result) -> list[str]:  # type: ignore[no-untyped-def]
    return [a.type for a in result.error.next_actions]


async def test_syntax_error_has_user_line_and_column() -> None:
    result = await run("const a = 1\nconst b = ;\n")
    assert result.status == "error"
    assert result.error.code == "RUN_SYNTAX_ERROR"
    assert (result.error.line, result.error.column) == (2, 11)
    assert action_types(result) == ["edit_request"]
    assert result.error.next_actions[0].model_dump()["line"] == 2


async def test_syntax_error_column_counts_characters_not_bytes() -> None:
    result = await run("const s = 'ééé'; let x = ;")
    assert result.error.code == "RUN_SYNTAX_ERROR"
    assert (result.error.line, result.error.column) == (1, 26)


async def test_syntax_error_on_the_last_expression_line() -> None:
    # The last expression gets `return ` inserted before it: columns must not move.
    result = await run("let a = 1\na +* 2")
    assert result.error.code == "RUN_SYNTAX_ERROR"
    assert result.error.line == 2
    assert result.error.column == 4


async def test_typescript_enum_is_a_syntax_error_at_its_position() -> None:
    result = await run("const x = 1\n  enum Color { Red }\n")
    assert result.error.code == "RUN_SYNTAX_ERROR"
    assert (result.error.line, result.error.column) == (2, 3)
    assert "enum" in result.error.message


async def test_runtime_error_maps_to_user_position_and_hides_wrapper_frames() -> None:
    source = "function inner(o) {\n  return o.missing.deep\n}\nconst x = 'é'; inner({})"
    result = await run(source)
    assert result.error.code == "RUN_EXCEPTION"
    assert result.error.message.startswith("TypeError:")
    assert (result.error.line, result.error.column) == (2, 10)
    stack = result.error.stack or ""
    assert "at inner (snippet:2:10)" in stack
    assert "<snippet> (snippet:4:" in stack
    assert "__snippet__" not in stack and "<input>" not in stack


async def test_thrown_non_error() -> None:
    result = await run("throw 'plain'")
    assert result.error.code == "RUN_EXCEPTION"
    assert "plain" in result.error.message


async def test_snippet_cannot_forge_an_engine_code() -> None:
    result = await run("const e = new Error('x'); e.code = 'RUN_TIMEOUT'; throw e")
    assert result.error.code == "RUN_EXCEPTION"


async def test_unknown_member_with_did_you_mean() -> None:
    hosts = {
        "store": {"listOrders": lambda c: [], "getOrder": lambda i: {}},
        "crm": {"getAccount": lambda a: {}},
    }
    result = await run("await store.listOrder('c1')", hosts)
    assert result.error.code == "RUN_UNKNOWN_MEMBER"
    assert result.error.path == "store.listOrder"
    assert result.error.did_you_mean == ["store.listOrders"]
    assert result.error.line == 1
    # Nothing was sent, but the attempt is in the audit, refused.
    (refused,) = result.calls
    assert refused.path == "store.listOrder" and refused.ok is False
    assert refused.error_code == "RUN_UNKNOWN_MEMBER"


async def test_unknown_member_suggests_where_the_name_lives() -> None:
    hosts = {"store": {"listOrders": lambda c: []}, "crm": {"getAccount": lambda a: {}}}
    result = await run("await store.getAccount('a1')", hosts)
    assert result.error.code == "RUN_UNKNOWN_MEMBER"
    assert result.error.did_you_mean == ["crm.getAccount"]


async def test_unknown_member_is_catchable_and_typeof_probes_do_not_throw() -> None:
    hosts = {"store": {"listOrders": lambda c: []}}
    result = await run(
        "let caught = null; try { store.nope } catch (e) { caught = e.code }\n"
        "({ caught, then: typeof store.then, json: JSON.stringify(Object.keys(store)) })",
        hosts,
    )
    assert result.value == {
        "caught": "RUN_UNKNOWN_MEMBER",
        "then": "undefined",
        "json": '["listOrders"]',
    }


async def test_host_exception_reaches_guest_as_class_name_only() -> None:
    def explode(x: int) -> None:
        raise ValueError("secret database password is hunter2")

    result = await run(
        "try { await h.explode(1) } catch (e) { return { code: e.code, message: e.message, name: e.name } }",
        {"h": {"explode": explode}},
    )
    assert result.status == "ok"
    assert result.value["code"] == "RUN_HOST_FUNCTION_ERROR"
    assert "ValueError" in result.value["message"]
    assert "hunter2" not in str(result.value)
    call = result.calls[0]
    assert call.ok is False and call.error_code == "RUN_HOST_FUNCTION_ERROR"
    assert "hunter2" in (call.error_message or "")  # the host side keeps it
    assert "ValueError" in (call.traceback or "")


async def test_uncaught_host_exception_fails_the_run_at_the_call_line() -> None:
    def explode() -> None:
        raise KeyError("k")

    result = await run("const a = 1\nawait h.explode()", {"h": {"explode": explode}})
    assert result.error.code == "RUN_HOST_FUNCTION_ERROR"
    assert result.error.line == 2
    assert "KeyError" in result.error.message


async def test_host_error_message_is_passed_on_purpose() -> None:
    def find(order_id: str) -> None:
        raise HostError(f"Order {order_id} not found", code="NOT_FOUND", details={"id": order_id})

    result = await run(
        "try { await h.find('o9') } catch (e) { return [e.message, e.hostCode, e.details] }",
        {"h": {"find": find}},
    )
    assert result.value == ["Order o9 not found", "NOT_FOUND", {"id": "o9"}]


async def test_argument_not_cloneable_names_the_path_and_does_not_call() -> None:
    called: list[object] = []
    result = await run(
        "await h.save({ items: [1, { handler: () => 1 }] })",
        {"h": {"save": lambda x: called.append(x)}},
    )
    assert result.error.code == "RUN_ARGUMENT_NOT_CLONEABLE"
    assert "arguments[0].items[1].handler" in result.error.message
    assert called == []
    (refused,) = result.calls
    assert (refused.path, refused.ok, refused.error_code) == (
        "h.save",
        False,
        "RUN_ARGUMENT_NOT_CLONEABLE",
    )


@pytest.mark.parametrize(
    "expr, what",
    [
        ("Symbol('s')", "a symbol"),
        ("Promise.resolve(1)", "a Promise"),
        ("new (class Point { constructor() { this.x = 1 } })()", "class Point"),
        ("new WeakMap()", "WeakMap"),
    ],
)
async def test_non_data_arguments_are_refused(expr: str, what: str) -> None:
    result = await run(f"await h.f({expr})", {"h": {"f": lambda x: x}})
    assert result.error.code == "RUN_ARGUMENT_NOT_CLONEABLE"
    assert what in result.error.message


async def test_host_returning_non_data_is_a_host_function_error() -> None:
    result = await run("await h.f()", {"h": {"f": lambda: object()}})
    assert result.error.code == "RUN_HOST_FUNCTION_ERROR"
    assert "cannot cross" in result.error.message


@pytest.mark.parametrize(
    "source, path, hint",
    [
        ("new Map([['a', 1]])", "$", "Object.fromEntries"),
        ("({ tags: new Set([1]) })", "$.tags", "[...set]"),
        ("({ n: 10n })", "$.n", "String("),
        ("({ f: () => 1 })", "$.f", "call the function"),
        ("(() => { const a = { x: 1 }; a.self = a; return a })()", "$.self", "back-reference"),
        ("[1, new Error('e')]", "$[1]", "error.name"),
        ("({ d: new Uint8Array(2) })", "$.d", "Array.from"),
        ("Promise.resolve", "$", "call the function"),
    ],
)
async def test_value_not_serializable_names_path_and_conversion(
    source: str, path: str, hint: str
) -> None:
    result = await run(f"return {source}")
    assert result.error is not None, result.value
    assert result.error.code == "RUN_VALUE_NOT_SERIALIZABLE"
    assert result.error.path == path
    assert hint in result.error.message
    assert action_types(result) == ["edit_request"]


async def test_dates_in_the_value_become_iso_strings() -> None:
    result = await run("({ at: new Date(Date.UTC(2024, 0, 2, 3, 4, 5)) })")
    assert result.value == {"at": "2024-01-02T03:04:05.000Z"}


async def test_detached_call_still_pending_at_return() -> None:
    async def slow() -> int:
        # Still pending when the snippet returns: it ends once the run has (0.2 s before).
        await get_host_function_context().cancelled.wait()
        return 1

    result = await run("h.slow(); return 5", {"h": {"slow": slow}})
    assert result.error.code == "RUN_DETACHED_CALL"
    assert result.error.line == 1
    # The call was let finish, so the audit trail says what happened.
    assert result.calls[0].ok is True


async def test_detached_call_finished_but_never_awaited() -> None:
    result = await run("h.fast(); await h.fast(); return 5", {"h": {"fast": lambda: 1}})
    assert result.error.code == "RUN_DETACHED_CALL"


async def test_promise_that_never_settles_is_reported_not_hung() -> None:
    result = await run("await new Promise(() => {})", limits=Limits(timeout_ms=5000))
    assert result.error.code == "RUN_EXCEPTION"
    assert "nothing will ever settle" in result.error.message  # found idle, not timed out


async def test_busy_runner_refuses_at_once() -> None:
    runner = create_runner(max_runs_in_flight=1)
    release = asyncio.Event()
    waiting = asyncio.Event()

    async def wait() -> int:
        waiting.set()
        await release.wait()
        return 1

    first = asyncio.ensure_future(runner.run("await h.wait()", {"h": {"wait": wait}}))
    await waiting.wait()  # the one run it may have is under way
    second = await runner.run("1")
    assert second.error is not None and second.error.code == "RUN_BUSY"
    assert action_types(second) == ["retry"]
    release.set()
    assert (await first).value == 1
    assert (await runner.run("2")).value == 2


async def test_approval_denied_code_is_catchable_error_object() -> None:
    from run_repl import ApprovalDenied

    def guarded() -> None:
        raise ApprovalDenied("no")

    result = await run("try { await h.g() } catch (e) { return e.code }", {"h": {"g": guarded}})
    assert result.value == "RUN_APPROVAL_DENIED"


async def test_map_round_trips_through_host() -> None:
    seen: list[object] = []

    def echo(x: object) -> object:
        seen.append(x)
        return x

    result = await run(
        "const m = await h.echo(new Map([[1, 'a']])); return [m instanceof Map, m.get(1)]",
        {"h": {"echo": echo}},
    )
    assert result.value == [True, "a"]
    assert isinstance(seen[0], JSMap)


def test_the_parents_did_you_mean_matches_the_guests() -> None:
    from run_repl.sandbox.session.host_functions import did_you_mean

    paths = ["store.listOrders", "store.getOrder", "crm.getAccount"]
    assert did_you_mean(paths, "store.listOrder") == ["store.listOrders"]
    assert did_you_mean(paths, "store.LISTORDERS") == ["store.listOrders"]
    assert did_you_mean(paths, "store.getAccount") == ["crm.getAccount"]  # where it lives
    assert did_you_mean(paths, "strore") == ["store"]
    assert did_you_mean(paths, "store.zzz") == []
