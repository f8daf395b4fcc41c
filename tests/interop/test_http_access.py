"""Who may use `run-repl mcp --http`, through real clients: the TypeScript SDK's, the
Python `mcp` client's (both revisions) and a bare HTTP POST.

The server learns its principal's token from RUN_REPL_MCP_TOKEN; a client proves who it
is with `Authorization: Bearer TOKEN` (conftest's `alice` and `bob`, Principal in the
harness). A request without the token, or with another, gets 401; a browser page's
foreign Origin gets 403 on every bind, not only on 127.0.0.1; one principal cannot read
another's results by their value_ref.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from interop_harness import (
    BIG,
    REVISIONS,
    Principal,
    Seen,
    call,
    drive,
    http_scenario,
    http_server,
    python_client,
    python_refused,
    python_steps,
    raw_post,
    text_of,
)

# Real processes talking for real: seconds each, out of the fast lane.
pytestmark = [pytest.mark.usefixtures("node_clients"), pytest.mark.slow]
FOREIGN = {"Origin": "http://evil.example"}


async def refused_by_every_client(url: str, headers: dict[str, str]) -> dict[str, object]:
    """What each client got when it tried to connect and call `run` with `headers`."""
    seen = await drive(http_scenario(url, [call("run", code="1")], headers))
    got: dict[str, object] = {"typescript": (seen.connect_error or {}).get("code", "served")}
    for revision in REVISIONS:
        # Its first answer; what it asks after a refusal (a client may look for OAuth
        # metadata) is its own affair, as long as nothing served it.
        statuses = await python_refused(url, revision, headers)
        served = "served" in statuses or any(s in (200, 202) for s in statuses)
        got[f"python {revision}"] = "served" if served else (statuses or [None])[0]
    got["raw"] = raw_post(url, headers)[0]
    return got


def only(status: int) -> dict[str, object]:
    return {
        "typescript": status,
        **{f"python {r}": status for r in REVISIONS},
        "raw": status,
    }


async def test_a_foreign_origin_is_refused_on_loopback(data: Path, alice: Principal) -> None:
    with http_server(data, env=alice.server_env()) as server:
        got = await refused_by_every_client(server.url, {**alice.headers(), **FOREIGN})
    assert got == only(403)


async def test_a_foreign_origin_is_refused_on_a_wildcard_bind(data: Path, alice: Principal) -> None:
    # Bound to every interface (reached here on loopback): the checks hold there too.
    with http_server(data, bind="0.0.0.0", env=alice.server_env()) as server:
        assert server.announced.startswith("http://0.0.0.0:")
        got = await refused_by_every_client(server.url, {**alice.headers(), **FOREIGN})
        status, _ = raw_post(server.url, {**alice.headers(), "Host": "evil.example"})
    assert got == only(403)
    assert 400 <= status < 500, status  # a rebound name: refused too (421 or 403)


async def test_a_request_without_credentials_gets_401(data: Path, alice: Principal) -> None:
    with http_server(data, env=alice.server_env()) as server:
        got = await refused_by_every_client(server.url, {})
        status, headers = raw_post(server.url, {})
        served = await drive(http_scenario(server.url, [call("run", code="1")], alice.headers()))
    assert got == only(401)
    assert status == 401 and headers.get("WWW-Authenticate", "").startswith("Bearer"), headers
    assert served.result(0)["structuredContent"]["value"] == 1  # the token itself is let in


async def test_a_wrong_token_gets_401(data: Path, alice: Principal, bob: Principal) -> None:
    with http_server(data, env=alice.server_env()) as server:
        got = await refused_by_every_client(server.url, bob.headers())
        status, _ = raw_post(server.url, {"Authorization": alice.token})  # not "Bearer ..."
    assert got == only(401)
    assert status == 401


@pytest.mark.parametrize("client", ["typescript", "python"])
async def test_another_principals_value_ref_is_refused(
    client: str, data: Path, alice: Principal, bob: Principal
) -> None:
    """Alice's result, paged by her on her server, and by Bob (who has its value_ref) on
    his: his call is a tool error that shows none of it."""
    mine = [
        call("run", code=BIG),
        call(
            "expand_result",
            value_ref={"$step": 0, "path": ["structuredContent", "value_ref"]},
            offset=200,
            limit=3,
        ),
    ]

    async def steps(url: str, who: Principal, these: list[dict[str, object]]) -> Seen:
        if client == "typescript":
            return await drive(http_scenario(url, these, who.headers()))
        async with python_client(url, "2026-07-28", headers=who.headers()) as session:
            return await python_steps(session, these)

    with (
        http_server(data, env=alice.server_env()) as hers,
        http_server(data, env=bob.server_env()) as his,
    ):
        alices = await steps(hers.url, alice, mine)
        ref = alices.result(0)["structuredContent"]["value_ref"]
        bobs = await steps(
            his.url, bob, [call("expand_result", value_ref=ref, offset=200, limit=3)]
        )
    assert alices.result(1)["structuredContent"]["items"] == [{"n": 200}, {"n": 201}, {"n": 202}]
    refused = bobs.result(0)  # a tool error, not a protocol error
    assert refused.get("isError") is True, refused
    assert "items" not in (refused.get("structuredContent") or {}), refused
    assert '"n": 200' not in text_of(refused) and '"n":200' not in text_of(refused), refused
