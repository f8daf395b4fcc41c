"""A host error the snippet catches carries the host's next actions (`nextActions`),
as the envelope would have had them: a snippet that goes on after a refusal can
pass the command on."""

from __future__ import annotations

from typing import Any

from run_repl import HostError, create_runner, requires_cli

SECRET = "h" * 40
TOP_UP = {"type": "run_cli_command", "command": "billing topup", "why": "Top up first."}


def pay(amount: int) -> dict[str, Any]:
    raise HostError(
        "Payment required",
        code="PAYMENT_REQUIRED",
        details={"amount": amount},
        next_actions=[TOP_UP],
    )


@requires_cli(command=lambda project: f"myapp keys create --project {project}")
def create_key(project: str) -> str:
    raise AssertionError("never runs: it handles a one-time secret")


def plain(_: int) -> None:
    raise HostError("Nope", code="NOPE")


def broken() -> None:
    raise ValueError("a bug")


HOSTS = {"billing": {"pay": pay, "plain": plain, "broken": broken}, "keys": {"create": create_key}}


async def test_a_caught_host_error_shows_its_next_actions() -> None:
    result = await create_runner(secret=SECRET).run(
        "try { await billing.pay(5) } catch (e) {"
        " return {code: e.code, hostCode: e.hostCode, details: e.details,"
        " nextActions: e.nextActions, command: e.nextActions[0].command} }",
        HOSTS,
    )
    assert result.status == "ok", result.error
    assert result.value == {
        "code": "RUN_HOST_FUNCTION_ERROR",
        "hostCode": "PAYMENT_REQUIRED",
        "details": {"amount": 5},
        "nextActions": [TOP_UP],
        "command": "billing topup",
    }


async def test_a_caught_cli_only_refusal_carries_its_command() -> None:
    result = await create_runner(secret=SECRET).run(
        "const told = [];"
        "try { await keys.create('p1') } catch (e) {"
        " if (e.hostCode !== 'SECRET_REQUIRES_CLI') throw e;"
        " told.push(e.nextActions[0]) }"
        "return told",
        HOSTS,
    )
    assert result.status == "ok", result.error
    [action] = result.value
    assert action["type"] == "run_cli_command"
    assert action["command"] == "myapp keys create --project p1"
    assert action["why"]


async def test_without_next_actions_from_the_host_there_are_none_to_show() -> None:
    result = await create_runner(secret=SECRET).run(
        "const out = [];"
        "try { await billing.plain(1) } catch (e) { out.push([e.hostCode, 'nextActions' in e]) }"
        "try { await billing.broken() } catch (e) { out.push([e.hostCode ?? null, 'nextActions' in e]) }"
        "return out",
        HOSTS,
    )
    assert result.status == "ok", result.error
    assert result.value == [["NOPE", False], [None, False]]


async def test_an_uncaught_host_error_still_ends_the_run_with_its_own_next_actions() -> None:
    result = await create_runner(secret=SECRET).run("await billing.pay(5)", HOSTS)
    assert result.status == "error" and result.error is not None
    assert result.error.code == "PAYMENT_REQUIRED"
    assert [a.model_dump(exclude_none=True) for a in result.error.next_actions] == [TOP_UP]
    # Rethrown after a look, the same.
    again = await create_runner(secret=SECRET).run(
        "try { await billing.pay(5) } catch (e) { e.nextActions.length; throw e }", HOSTS
    )
    assert again.error is not None and again.error.code == "PAYMENT_REQUIRED"
    assert [a.model_dump(exclude_none=True) for a in again.error.next_actions] == [TOP_UP]


async def test_next_actions_that_cannot_cross_are_left_out_and_the_rest_kept() -> None:
    def odd() -> None:
        raise HostError(
            "Odd", code="ODD", details={"k": 1}, next_actions=[{"type": "retry", "x": object()}]
        )

    result = await create_runner(secret=SECRET).run(
        "try { await t.odd() } catch (e) { return [e.hostCode, e.details, 'nextActions' in e] }",
        {"t": {"odd": odd}},
    )
    assert result.status == "ok", result.error
    assert result.value == ["ODD", {"k": 1}, False]
