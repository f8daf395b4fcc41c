"""Resolutions are checked whole, at the boundary, before anything of the resumed run runs."""

from __future__ import annotations

from typing import Any

import pytest

from run_repl import create_runner, get_host_function_context

SECRET = "r" * 40
SOURCE = "return await Promise.all([t.pause(1), t.pause(2)])"


def _hosts(ran: list[Any]) -> dict[str, Any]:
    def pause(n: int) -> Any:
        ctx = get_host_function_context()
        if ctx.resume is None:
            ctx.interrupt({"n": n})
        ran.append((n, ctx.resume.resolution))
        return ctx.resume.resolution

    return {"t": {"pause": pause}}


async def _two_paused() -> tuple[Any, Any, list[Any], dict[str, Any]]:
    runner = create_runner(secret=SECRET)
    ran: list[Any] = []
    hosts = _hosts(ran)
    first = await runner.run(SOURCE, hosts)
    assert first.status == "interrupted" and len(first.interruptions) == 2
    return runner, first, ran, hosts


@pytest.mark.parametrize(
    ("make", "named"),
    [
        # One interruption answered twice, yes and no: ambiguous.
        (
            lambda a, b: [
                {"interruption_id": a, "value": True},
                {"interruption_id": a, "value": False},
            ],
            "resolutions[1]",
        ),
        # A misspelt field would resume with no value at all.
        (lambda a, b: [{"interruption_id": a, "vlaue": True}], "'vlaue'"),
        (lambda a, b: [{"interruption_id": a, "value": True, "extra": 1}], "'extra'"),
        # No value at all.
        (lambda a, b: [{"interruption_id": a}], "resolutions[0]"),
        # An id this continuation does not wait on.
        (lambda a, b: [{"interruption_id": "int_nope", "value": True}], "int_nope"),
        # Not a mapping; an id that is not text.
        (lambda a, b: [[a, True]], "resolutions[0]"),
        (lambda a, b: [{"interruption_id": 7, "value": True}], "resolutions[0]"),
        # A good entry beside a bad one: the whole set is refused, the good one is not used.
        (
            lambda a, b: [
                {"interruption_id": b, "value": True},
                {"interruption_id": a, "valeu": 1},
            ],
            "'valeu'",
        ),
    ],
    ids=[
        "duplicate",
        "misspelt",
        "extra",
        "no-value",
        "unknown-id",
        "not-a-mapping",
        "id-not-text",
        "good-beside-bad",
    ],
)
async def test_a_bad_set_of_resolutions_is_refused_whole_before_anything_runs(
    make: Any, named: str
) -> None:
    runner, first, ran, hosts = await _two_paused()
    a, b = (i.id for i in first.interruptions)
    result = await runner.run(
        SOURCE, hosts, continuation=first.continuation, resolutions=make(a, b)
    )
    assert result.status == "error", result
    assert result.error is not None
    assert result.error.code == "RUN_RESOLUTION_INVALID"
    assert named in result.error.message
    # What to send instead, in the message and as the next action.
    assert "{'interruption_id'" in result.error.message
    assert [x.type for x in result.error.next_actions] == ["edit_request"]
    assert ran == [] and result.calls == []
    assert result.stats.host_calls_executed == 0
    # The continuation is not spent: a good set resumes it.
    done = await runner.run(
        SOURCE,
        hosts,
        continuation=first.continuation,
        resolutions=[{"interruption_id": a, "value": "A"}, {"interruption_id": b, "value": "B"}],
    )
    assert done.status == "ok" and done.value == ["A", "B"]


async def test_resolutions_that_are_not_a_list_are_refused() -> None:
    runner, first, ran, hosts = await _two_paused()
    a = first.interruptions[0].id
    result = await runner.run(
        SOURCE,
        hosts,
        continuation=first.continuation,
        resolutions={"interruption_id": a, "value": True},  # type: ignore[arg-type]
    )
    assert result.error is not None and result.error.code == "RUN_RESOLUTION_INVALID"
    assert "send a list" in result.error.message and ran == []


async def test_a_subset_of_good_resolutions_still_leaves_the_rest_pending() -> None:
    runner, first, ran, hosts = await _two_paused()
    a, b = (i.id for i in first.interruptions)
    part = await runner.run(
        SOURCE,
        hosts,
        continuation=first.continuation,
        resolutions=[{"interruption_id": a, "value": None}],
    )
    assert part.status == "interrupted" and [i.id for i in part.interruptions] == [b]
    assert ran == [(1, None)]  # an explicit null is a value like any other
