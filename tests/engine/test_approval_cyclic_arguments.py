"""A call waiting for approval whose arguments refer back to themselves (a cycle) is
refused without asking, with a reason a program reads and a person understands.

The question must be shown whole, and a cycle written out never ends; the store and
the replay keep arguments as JSON, which has no back-references. So the call is not
asked about as something else (a `[Circular]` preview would be approving a value the
function never gets): it is refused, naming where the cycle is and what to pass
instead, and the function does not run."""

from __future__ import annotations

from typing import Any

from run_repl import requires_approval, run


def refund_host(taken: list[Any]) -> dict[str, Any]:
    @requires_approval(message="Refund?")
    def refund(order: Any) -> str:
        taken.append(order)
        return "refunded"

    return {"orders": {"refund": refund}}


async def test_a_cycle_in_the_arguments_is_refused_naming_where_it_is() -> None:
    taken: list[Any] = []
    result = await run(
        "const a = {n: 1}; a.self = a; return await orders.refund(a)", refund_host(taken)
    )
    assert result.status == "error" and result.error is not None
    assert result.error.code == "RUN_APPROVAL_DENIED"
    assert "refused without asking" in result.error.message
    assert "(arguments[0].self is arguments[0] again)" in result.error.message
    assert "Pass a copy without the back-reference" in result.error.message
    assert not result.interruptions and taken == []
    [call] = result.calls
    assert call.decision == "refused"


async def test_the_snippet_catching_the_refusal_reads_its_reason_and_what_to_do() -> None:
    taken: list[Any] = []
    result = await run(
        "const xs = [1]; xs.push(xs);"
        "try { await orders.refund({xs}) } catch (e) {"
        "  return {code: e.code, details: e.details, next: e.nextActions} }",
        refund_host(taken),
    )
    assert result.status == "ok", result.error
    assert result.value["code"] == "RUN_APPROVAL_DENIED"
    assert result.value["details"] == {
        "reason": "arguments_cyclic",
        "at": "arguments[0].xs[1]",
        "refers_to": "arguments[0].xs",
    }
    [action] = result.value["next"]
    assert "without the back-reference at arguments[0].xs[1]" in action["why"]
    assert taken == []


async def test_shared_parts_without_a_cycle_are_still_asked_about_whole() -> None:
    result = await run(
        "const p = {title: 'x'}; return await orders.refund({a: p, b: p})", refund_host([])
    )
    assert result.status == "interrupted"
    [question] = result.interruptions or []
    assert question.args == [{"a": {"title": "x"}, "b": {"title": "x"}}]
