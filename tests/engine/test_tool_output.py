"""Results worded for a model (ok, paused or failed, with what to do next)."""

from __future__ import annotations

from run_repl import Limits, create_runner, requires_approval, run

SECRET = "s" * 40


async def test_ok_with_logs() -> None:
    result = await run("console.log('hi'); console.warn('careful'); return {a: 1}")
    assert result.to_tool_output() == {
        "ok": True,
        "result": {"a": 1},
        "logs": ["hi", "[warn] careful"],
    }


async def test_a_big_value_comes_as_its_window_with_how_to_page() -> None:
    result = await run("Array.from({length: 5000}, (_, i) => i)")
    out = result.to_tool_output()
    assert out["ok"] is True and out["total"] == 5000 and out["result"] == list(range(out["shown"]))
    assert f"offset {out['shown']}" in out["next"] and result.value_ref in out["next"]


async def test_an_exception_with_its_line_and_next_step() -> None:
    result = await run("const x = 1\nconst y = null\ny.f()")
    out = result.to_tool_output()
    assert out["ok"] is False
    assert out["error"].startswith("TypeError: ")
    assert "(line 3)" in out["error"] and "Next: " in out["error"]


async def test_a_timeout_is_worded_as_a_timeout_not_a_refusal() -> None:
    result = await run("while (true) {}", limits=Limits(timeout_ms=200))
    out = result.to_tool_output()
    assert out["error"].startswith("Timed out (RUN_TIMEOUT): ")
    assert "Denied" not in out["error"]


async def test_a_refusal_is_a_denial() -> None:
    result = await run("1;" * 1000, limits=Limits(max_source_bytes=1024))
    out = result.to_tool_output()
    assert out["error"].startswith("Denied (RUN_SOURCE_TOO_LARGE): ")


async def test_a_paused_run_says_what_was_not_run() -> None:
    @requires_approval
    def publish(draft_id: str) -> None: ...

    runner = create_runner(secret=SECRET)
    result = await runner.run("await docs.publish('draft_01')", {"docs": {"publish": publish}})
    out = result.to_tool_output()
    assert out == {
        "ok": False,
        "error": "Paused: 1 operation in this code needs the user's approval and was NOT run: "
        'docs.publish("draft_01"). A person decides in run-repl; the run then resumes where it '
        "paused. Do not retry these operations another way.",
    }
    assert (
        "call approval_status" in result.to_tool_output(paused_next="call approval_status")["error"]
    )
