"""Interrupt, approve and resume by replay, with signed continuations."""

from __future__ import annotations

import asyncio
import random
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import forked_cli
import pytest

from run_repl import (
    create_runner,
    get_host_function_context,
    requires_approval,
    run,
)
from run_repl.sandbox.errors import ContinuationInvalid
from run_repl.sandbox.resume.continuation import Checkpoint, ContinuationSigner
from run_repl.sandbox.session.host_functions import build_manifest

SECRET = "s" * 40


def resolve(result: Any, value: Any, which: int = 0) -> list[dict[str, Any]]:
    return [{"interruption_id": result.interruptions[which].id, "value": value}]


async def test_context_inside_and_outside_a_host_call() -> None:
    seen: dict[str, Any] = {}

    async def probe(x: int) -> str:
        ctx = get_host_function_context()
        await asyncio.sleep(0)  # still there after awaited work
        ctx2 = get_host_function_context()
        seen.update(
            path=ctx.path,
            index=ctx.request_index,
            same=ctx is ctx2,
            cancelled=ctx.cancelled.is_set(),
        )
        seen["run"] = ctx.logical_run_id
        return "ok"

    def sync_probe() -> str:
        return get_host_function_context().path

    result = await run(
        "await h.probe(1); await h.probe(2); return await h.sync()",
        {"h": {"probe": probe, "sync": sync_probe}},
    )
    assert result.value == "h.sync"
    assert (
        seen["path"] == "h.probe"
        and seen["index"] == 2
        and seen["same"]
        and seen["cancelled"] is False
    )
    assert seen["run"] == result.run_id
    with pytest.raises(RuntimeError, match="outside a host function"):
        get_host_function_context()


async def test_authentication_interrupt_and_resume_with_data() -> None:
    runner = create_runner(secret=SECRET)
    logical_ids: list[str] = []

    async def fetch_private(doc: str) -> dict[str, str]:
        ctx = get_host_function_context()
        logical_ids.append(ctx.logical_run_id)
        if ctx.resume is None:
            ctx.interrupt({"kind": "authentication", "provider": "github"})
        assert ctx.resume is not None
        return {
            "doc": doc,
            "token": ctx.resume.resolution["token"],
            "asked": ctx.resume.payload["provider"],
        }

    source = "const d = await docs.fetchPrivate('readme'); return d"
    first = await runner.run(source, {"docs": {"fetchPrivate": fetch_private}})
    assert first.status == "interrupted"
    assert first.interruptions[0].payload == {"kind": "authentication", "provider": "github"}
    assert first.interruptions[0].args == ["readme"]
    resumed = await runner.run(
        source,
        {"docs": {"fetchPrivate": fetch_private}},
        continuation=first.continuation,
        resolutions=resolve(first, {"token": "t0k"}),
    )
    assert resumed.value == {"doc": "readme", "token": "t0k", "asked": "github"}
    assert logical_ids[0] == logical_ids[1] == first.run_id


async def test_finished_calls_run_exactly_once_across_interrupt_and_resume() -> None:
    runner = create_runner(secret=SECRET)
    counts = {"list": 0, "publish": 0}

    def list_drafts() -> list[str]:
        counts["list"] += 1
        return ["d1", "d2"]

    @requires_approval
    def publish(draft: str) -> dict[str, Any]:
        counts["publish"] += 1
        return {"published": draft}

    hosts = {"documents": {"listDrafts": list_drafts, "publish": publish}}
    source = """
const drafts = await documents.listDrafts()
console.log('drafts', drafts.length)
const out = await documents.publish(drafts[0])
return { out, again: await documents.listDrafts() }
"""
    first = await runner.run(source, hosts)
    assert first.status == "interrupted"
    assert first.interruptions[0].payload["kind"] == "approval"
    assert first.interruptions[0].payload["path"] == "documents.publish"
    assert first.interruptions[0].payload["args"] == ["d1"]
    assert counts == {"list": 1, "publish": 0}
    resumed = await runner.run(
        source, hosts, continuation=first.continuation, resolutions=resolve(first, True)
    )
    assert resumed.status == "ok", resumed.error
    assert resumed.value == {"out": {"published": "d1"}, "again": ["d1", "d2"]}
    assert counts == {"list": 2, "publish": 1}  # the first list call was answered from the ledger
    replayed = [c.replayed for c in resumed.calls]
    assert replayed == [True, False, False]
    assert resumed.calls[1].decision == "approved"
    assert resumed.calls[1].wait_ms is not None and resumed.calls[1].wait_ms >= 0
    assert resumed.stats.host_calls_replayed == 1


async def test_denial_throws_approval_denied_inside_the_guest() -> None:
    runner = create_runner(secret=SECRET)
    ran: list[str] = []

    @requires_approval(message=lambda order_id: f"Refund {order_id}?")
    async def refund(order_id: str) -> str:
        ran.append(order_id)
        return "done"

    source = "try { await orders.refund('o1') } catch (e) { return { code: e.code, message: e.message } }"
    first = await runner.run(source, {"orders": {"refund": refund}})
    assert first.interruptions[0].payload["message"] == "Refund o1?"
    denied = await runner.run(
        source,
        {"orders": {"refund": refund}},
        continuation=first.continuation,
        resolutions=resolve(first, False),
    )
    assert denied.value["code"] == "RUN_APPROVAL_DENIED"
    assert ran == []
    assert denied.calls[0].decision == "denied"


async def test_policy_map_with_globs() -> None:
    ran: list[str] = []

    def act(name: str) -> Any:
        def fn() -> str:
            ran.append(name)
            return name

        return fn

    hosts = {"documents": {"publish": act("publish"), "delete": act("delete"), "read": act("read")}}
    runner = create_runner(
        secret=SECRET, approvals={"documents.publish": "ask", "documents.*": "deny"}
    )
    read = await runner.run("try { await documents.read() } catch (e) { return e.code }", hosts)
    assert read.value == "RUN_APPROVAL_DENIED"  # documents.* denies what is not listed
    result = await runner.run("await documents.publish()", hosts)
    assert result.status == "interrupted"
    allow = create_runner(secret=SECRET, approvals={"documents.*": "allow"})
    assert (await allow.run("await documents.delete()", hosts)).value == "delete"
    assert ran == ["delete"]
    with pytest.raises(ValueError):
        create_runner(approvals={"x": "maybe"})


async def test_concurrent_interruptions_come_back_as_one_batch_and_subsets_resolve() -> None:
    runner = create_runner(secret=SECRET)
    done: list[str] = []

    @requires_approval
    async def send(to: str) -> str:
        done.append(to)
        return f"sent {to}"

    hosts = {"mail": {"send": send}}
    source = "return await Promise.all([mail.send('a'), mail.send('b')])"
    first = await runner.run(source, hosts)
    assert first.status == "interrupted"
    assert sorted(i.args[0] for i in first.interruptions) == ["a", "b"]
    ids = {i.args[0]: i.id for i in first.interruptions}
    partial = await runner.run(
        source,
        hosts,
        continuation=first.continuation,
        resolutions=[{"interruption_id": ids["a"], "value": True}],
    )
    assert partial.status == "interrupted"
    assert [i.id for i in partial.interruptions] == [ids["b"]]
    assert done == ["a"]
    final = await runner.run(
        source,
        hosts,
        continuation=partial.continuation,
        resolutions=[{"interruption_id": ids["b"], "value": True}],
    )
    assert final.value == ["sent a", "sent b"]
    assert done == ["a", "b"]


async def test_clock_and_randomness_replay_exactly() -> None:
    runner = create_runner(secret=SECRET)

    @requires_approval
    def gate() -> int:
        return 1

    source = """
const before = { now: Date.now(), date: new Date().toISOString(), r: Math.random(), u: crypto.randomUUID() }
await h.gate()
return before
"""
    first = await runner.run(source, {"h": {"gate": gate}})
    await asyncio.sleep(0.05)
    resumed = await runner.run(
        source,
        {"h": {"gate": gate}},
        continuation=first.continuation,
        resolutions=resolve(first, True),
    )
    again = await runner.run(
        source,
        {"h": {"gate": gate}},
        continuation=first.continuation,
        resolutions=resolve(first, True),
    )
    assert resumed.value == again.value
    fresh = await runner.run(source, {"h": {"gate": gate}})
    assert fresh.status == "interrupted"  # and a new run gets new randomness:
    other = await runner.run(
        source,
        {"h": {"gate": gate}},
        continuation=fresh.continuation,
        resolutions=resolve(fresh, True),
    )
    assert other.value["r"] != resumed.value["r"]


# ------------------------------------------------------------------ tokens


async def interrupted(runner: Any, source: str = "await h.gate()") -> tuple[Any, dict[str, Any]]:
    @requires_approval
    def gate() -> int:
        return 7

    hosts = {"h": {"gate": gate}}
    return await runner.run(source, hosts), hosts


async def test_tampered_and_truncated_tokens_are_refused_before_any_call() -> None:
    runner = create_runner(secret=SECRET)
    first, hosts = await interrupted(runner)
    token = first.continuation
    for bad in (
        token[:-1],
        token[: len(token) // 2],
        token + "A",
        "rrc1.x.y",
        "",
        "garbage",
        token.replace("rrc1", "rrc2"),
    ):
        result = await runner.run(
            "await h.gate()", hosts, continuation=bad, resolutions=resolve(first, True)
        )
        assert result.error.code == "RUN_CONTINUATION_INVALID", bad
        assert result.calls == []
        assert result.error.next_actions[0].type == "run_again"


def _signed_token() -> tuple[ContinuationSigner, Any, str]:
    """A signer, the manifest it signed for, and a token of a run that made no call."""
    signer = ContinuationSigner(SECRET.encode())
    manifest = build_manifest({"h": {"gate": lambda: 1}})
    token = signer.sign(
        Checkpoint(
            source="await h.gate()",
            manifest_digest=manifest.digest,
            context=None,
            logical_run_id="run_1",
            seed=[1, 2, 3, 4],
            clock_ms=0,
            elapsed_ms=1.0,
            ledger=[],
            settle_order=[],
            interrupts=[],
        )
    )
    return signer, manifest, token


def test_ten_thousand_mutations_are_all_refused() -> None:
    signer, manifest, token = _signed_token()
    signer.verify(token, source="await h.gate()", manifest_digest=manifest.digest, context=None)
    rng = random.Random(42)
    alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_."
    refused = 0
    for _ in range(10_000):
        chars = list(token)
        kind = rng.randrange(4)
        pos = rng.randrange(len(chars))
        if kind == 0:
            chars[pos] = rng.choice([c for c in alphabet if c != chars[pos]])
        elif kind == 1:
            del chars[pos]
        elif kind == 2:
            chars.insert(pos, rng.choice(alphabet))
        else:
            chars[pos], chars[-1 - pos] = chars[-1 - pos], chars[pos]
        mutated = "".join(chars)
        if mutated == token:
            refused += 1
            continue
        try:
            signer.verify(
                mutated, source="await h.gate()", manifest_digest=manifest.digest, context=None
            )
        except ValueError:
            refused += 1
    assert refused == 10_000


async def test_expired_token() -> None:
    runner = create_runner(secret=SECRET, max_age_s=0)
    first, hosts = await interrupted(runner)
    await asyncio.sleep(0.01)
    result = await runner.run(
        "await h.gate()", hosts, continuation=first.continuation, resolutions=resolve(first, True)
    )
    assert result.error.code == "RUN_CONTINUATION_INVALID" and "expired" in result.error.message


async def test_wrong_source_manifest_audience_context_and_key() -> None:
    runner = create_runner(secret=SECRET)
    first, hosts = await interrupted(runner)
    token, res = first.continuation, resolve(first, True)
    wrong_source = await runner.run("await h.gate() ", hosts, continuation=token, resolutions=res)
    assert "another source" in wrong_source.error.message
    more_hosts = {"h": {**hosts["h"], "extra": lambda: 1}}
    wrong_manifest = await runner.run(
        "await h.gate()", more_hosts, continuation=token, resolutions=res
    )
    assert "host functions" in wrong_manifest.error.message
    other_audience = create_runner(secret=SECRET, audience="billing")
    assert (
        await other_audience.run("await h.gate()", hosts, continuation=token, resolutions=res)
    ).error.code == ("RUN_CONTINUATION_INVALID")
    other_key = create_runner(secret="k" * 40)
    assert (
        "signature"
        in (
            await other_key.run("await h.gate()", hosts, continuation=token, resolutions=res)
        ).error.message
    )
    bound = await runner.run("await h.gate()", hosts, context={"tenant": "acme"})
    wrong_ctx = await runner.run(
        "await h.gate()",
        hosts,
        continuation=bound.continuation,
        resolutions=resolve(bound, True),
        context={"tenant": "evil"},
    )
    assert "context" in wrong_ctx.error.message
    right_ctx = await runner.run(
        "await h.gate()",
        hosts,
        continuation=bound.continuation,
        resolutions=resolve(bound, True),
        context={"tenant": "acme"},
    )
    assert right_ctx.status == "ok"
    unknown = await runner.run(
        "await h.gate()",
        hosts,
        continuation=token,
        resolutions=[{"interruption_id": "int_x", "value": True}],
    )
    assert "no pending interruption" in unknown.error.message


async def test_key_rotation_old_key_verifies() -> None:
    old = create_runner(secret="o" * 40)
    first, hosts = await interrupted(old)
    rotated = create_runner(secret="n" * 40, verify_secrets=["o" * 40])
    result = await rotated.run(
        "await h.gate()", hosts, continuation=first.continuation, resolutions=resolve(first, True)
    )
    assert result.value == 7


def test_short_secret_is_refused() -> None:
    with pytest.raises(ValueError, match="at least 32 bytes"):
        create_runner(secret="short")


async def test_secret_generated_once_into_the_data_dir(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("RUN_REPL_DATA_DIR", str(tmp_path))
    monkeypatch.delenv("RUN_REPL_SECRET", raising=False)
    first, hosts = await interrupted(create_runner())
    key = tmp_path / "continuation-secret.key"
    assert key.exists() and (key.stat().st_mode & 0o777) == 0o600
    # Another runner (or process) with the same data dir can resume it.
    result = await create_runner().run(
        "await h.gate()", hosts, continuation=first.continuation, resolutions=resolve(first, True)
    )
    assert result.value == 7


async def test_replay_mismatch_is_detected_before_the_call_runs() -> None:
    runner = create_runner(secret=SECRET)
    ran: list[int] = []
    hosts = {"h": {"f": lambda x: ran.append(x) or x}}
    source = "await h.f(1); await h.f(2)"
    manifest = build_manifest(hosts)
    from run_repl.sandbox.resume.replay import LedgerEntry

    signer = runner._signer()
    # A ledger that says the first call had other arguments than it has.
    forged = signer.sign(
        Checkpoint(
            source=source,
            manifest_digest=manifest.digest,
            context=None,
            logical_run_id="run_x",
            seed=[1, 2, 3, 4],
            clock_ms=0,
            elapsed_ms=0,
            ledger=[LedgerEntry(seq=1, path="h.f", args_digest="0" * 32, ok=True, wire="J1")],
            settle_order=[1],
            interrupts=[],
        )
    )
    result = await runner.run(source, hosts, continuation=forged)
    assert result.error.code == "RUN_REPLAY_MISMATCH"
    assert ran == []


# ------------------------------------------------------------------ the store's approvals, across processes

HOST_MODULE = """
from pathlib import Path
from run_repl import requires_approval
LOG = Path(__file__).with_name("side_effects.log")

def list_orders(customer):
    with LOG.open("a") as fh:
        fh.write("list\\n")
    return [{"id": "o1", "customer": customer}]

@requires_approval(message=lambda order_id: f"Refund {order_id}?")
def refund(order_id):
    with LOG.open("a") as fh:
        fh.write("refund " + order_id + "\\n")
    return {"refunded": order_id}

HOSTS = {"orders": {"list": list_orders, "refund": refund}}
"""

SOURCE = "const [o] = await orders.list('c1'); return await orders.refund(o.id)"

APPROVE = """
import asyncio, sys, json
sys.path.insert(0, sys.argv[1])
import approvals_host
from run_repl import create_runner
from run_repl.store import SqliteStore, ApprovalConflict
from run_repl.store.approvals.flow import decide
store = SqliteStore(sys.argv[2])
runner = create_runner(store=store)
try:
    result = asyncio.run(decide(store, runner, approvals_host.HOSTS, {sys.argv[3]: True}))
    print(json.dumps({"status": result.status, "value": result.value}))
except ApprovalConflict as exc:
    print(json.dumps({"conflict": str(exc)}))
"""


@pytest.mark.slow
async def test_pending_approval_survives_the_process_and_is_resumed_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from run_repl.store import SqliteStore
    from run_repl.store.approvals.flow import save_interrupted

    monkeypatch.setenv("RUN_REPL_DATA_DIR", str(tmp_path))
    (tmp_path / "approvals_host.py").write_text(textwrap.dedent(HOST_MODULE))
    sys.path.insert(0, str(tmp_path))
    try:
        import approvals_host  # type: ignore[import-not-found]
    finally:
        sys.path.remove(str(tmp_path))
    db = tmp_path / "store.sqlite3"
    store = SqliteStore(db)
    runner = create_runner(store=store)
    first = await runner.run(SOURCE, approvals_host.HOSTS)
    saved = save_interrupted(store, first, source=SOURCE, host="approvals_host:HOSTS")
    assert [a.status for a in saved] == ["pending"] and saved[0].message == "Refund o1?"
    store.close()
    del runner

    def approve() -> dict[str, Any]:
        import json

        out = subprocess.run(
            forked_cli.python_c(APPROVE, str(tmp_path), str(db), saved[0].id),
            capture_output=True,
            text=True,
            check=True,
            env={**__import__("os").environ, "RUN_REPL_DATA_DIR": str(tmp_path)},
        )
        return json.loads(out.stdout)

    assert approve() == {"status": "ok", "value": {"refunded": "o1"}}
    second = approve()
    assert "already approved" in second["conflict"]
    log = (tmp_path / "side_effects.log").read_text().splitlines()
    assert log == ["list", "refund o1"]
    assert SqliteStore(db).get_approval(saved[0].id).status == "approved"


def test_a_token_spelled_outside_base64url_is_refused_as_such() -> None:
    # One spelling per token: standard base64's "+" and "/", padding, blanks, and
    # letters or digits outside ASCII (which str methods would call alphanumeric).
    signer, manifest, token = _signed_token()
    prefix, data, mac = token.split(".")
    # The signature is read first (the data is checked against it, then decoded).
    for bad_mac in [mac[:5] + c + mac[6:] for c in ("+", "/", " ", "\n", "é", "\uff11", "\u0660")]:
        for bad in (f"{prefix}.{data}.{bad_mac}", f"{prefix}.{data}.{mac}=", f"{prefix}.{data}."):
            with pytest.raises(ContinuationInvalid, match="not base64url"):
                signer.verify(
                    bad, source="await h.gate()", manifest_digest=manifest.digest, context=None
                )
