"""The engine's part of "an approved call runs at most once": the resume guard,
consume-once continuations, the audit facts a store decides from, and runs that
always answer with an envelope, whatever the guest sends back."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any

import pytest

from run_repl import Limits, create_runner, requires_approval
from run_repl.sandbox.resume.continuation import SecretTooShort, load_or_create_secret

SECRET = "s" * 40


def approve(result: Any, value: Any = True) -> list[dict[str, Any]]:
    return [{"interruption_id": i.id, "value": value} for i in result.interruptions]


class Bank:
    def __init__(self) -> None:
        self.transfers: list[int] = []
        self.notes: list[str] = []

    def hosts(self) -> dict[str, Any]:
        @requires_approval
        def transfer(amount: int) -> int:
            self.transfers.append(amount)
            return len(self.transfers)

        def note(text: str) -> str:
            self.notes.append(text)
            return text

        async def lookup(key: str) -> str:
            return key.upper()

        return {"bank": {"transfer": transfer, "note": note, "lookup": lookup}}


class ConsumedTokens:
    """A consume-once store in memory, as the real stores implement it."""

    def __init__(self) -> None:
        self.seen: dict[str, float] = {}

    def consume_continuation(self, digest: str, expires_at: float) -> bool:
        if digest in self.seen:
            return False
        self.seen[digest] = expires_at
        return True


async def test_the_guard_runs_once_before_the_first_live_call() -> None:
    bank = Bank()
    runner = create_runner(secret=SECRET)
    source = "const k = await bank.lookup('a'); const n = await bank.transfer(5); await bank.note('x'); return [k, n]"
    first = await runner.run(source, bank.hosts())
    assert first.status == "interrupted"
    events: list[str] = []

    def guard() -> None:
        # Replayed calls come first; nothing of the host has run yet.
        events.append(f"guard transfers={len(bank.transfers)} notes={len(bank.notes)}")

    done = await runner.run(
        source,
        bank.hosts(),
        continuation=first.continuation,
        resolutions=approve(first),
        resume_guard=guard,
    )
    assert done.status == "ok" and done.value == ["A", 1]
    assert events == ["guard transfers=0 notes=0"]
    assert bank.transfers == [5] and bank.notes == ["x"]
    assert done.stats.host_calls_executed == 2  # transfer and note; lookup came from the record
    assert done.stats.host_calls_replayed == 1


async def test_a_guard_that_refuses_stops_the_run_before_anything_runs() -> None:
    bank = Bank()
    runner = create_runner(secret=SECRET)
    source = "await bank.transfer(7); await bank.note('after'); return 1"
    first = await runner.run(source, bank.hosts())

    async def guard() -> None:
        raise RuntimeError("the approval was claimed by someone else")

    done = await runner.run(
        source,
        bank.hosts(),
        continuation=first.continuation,
        resolutions=approve(first),
        resume_guard=guard,
    )
    assert done.status == "error"
    assert done.error is not None and done.error.code == "RUN_CONTINUATION_INVALID"
    assert "claimed by someone else" in done.error.message
    assert bank.transfers == [] and bank.notes == []
    assert done.stats.host_calls_executed == 0
    refused = [c for c in done.calls if c.path == "bank.transfer"]
    assert (
        refused and refused[0].ok is False and refused[0].error_code == "RUN_CONTINUATION_INVALID"
    )


async def test_a_guard_is_not_needed_when_nothing_runs_live() -> None:
    # A denial is answered without running anything: the guard never runs.
    bank = Bank()
    runner = create_runner(secret=SECRET)
    source = "try { await bank.transfer(1) } catch (e) { return e.code }"
    first = await runner.run(source, bank.hosts())
    calls: list[int] = []
    done = await runner.run(
        source,
        bank.hosts(),
        continuation=first.continuation,
        resolutions=approve(first, False),
        resume_guard=lambda: calls.append(1),
    )
    assert done.value == "RUN_APPROVAL_DENIED"
    assert calls == [] and done.stats.host_calls_executed == 0


async def test_records_name_the_interruption_they_wait_on_and_answer() -> None:
    bank = Bank()
    runner = create_runner(secret=SECRET)
    source = "const [a, b] = await Promise.all([bank.transfer(1), bank.transfer(2)]); return a + b"
    first = await runner.run(source, bank.hosts())
    ids = {i.id for i in first.interruptions}
    assert len(ids) == 2
    waiting = {c.interruption_id for c in first.calls if c.decision == "pending"}
    assert waiting == ids
    # Decide one: the other waits again, with the same id.
    one = first.interruptions[0]
    second = await runner.run(
        source,
        bank.hosts(),
        continuation=first.continuation,
        resolutions=[{"interruption_id": one.id, "value": True}],
    )
    assert second.status == "interrupted"
    approved = [c for c in second.calls if c.interruption_id == one.id]
    assert len(approved) == 1 and approved[0].decision == "approved" and approved[0].ok is True
    still = [c for c in second.calls if c.decision == "pending"]
    assert [c.interruption_id for c in still] == [first.interruptions[1].id]
    assert second.interruptions[0].id == first.interruptions[1].id


async def test_consume_once_a_continuation_drives_live_calls_only_once() -> None:
    bank = Bank()
    tokens = ConsumedTokens()
    runner = create_runner(secret=SECRET, continuation_store=tokens)
    source = "return await bank.transfer(100)"
    first = await runner.run(source, bank.hosts())
    results = [
        await runner.run(
            source, bank.hosts(), continuation=first.continuation, resolutions=approve(first)
        )
        for _ in range(3)
    ]
    assert [r.status for r in results] == ["ok", "error", "error"]
    assert all(r.error.code == "RUN_CONTINUATION_INVALID" for r in results[1:])  # type: ignore[union-attr]
    assert "already used" in results[1].error.message  # type: ignore[union-attr]
    assert bank.transfers == [100]
    assert len(tokens.seen) == 1
    (expires_at,) = tokens.seen.values()
    assert time.time() + 3_500 < expires_at <= time.time() + 3_600  # one hour by default


async def test_consume_once_a_resume_that_never_ran_anything_leaves_the_token_usable() -> None:
    bank = Bank()
    tokens = ConsumedTokens()
    runner = create_runner(secret=SECRET, continuation_store=tokens, max_runs_in_flight=1)
    source = "return await bank.transfer(3)"
    first = await runner.run(source, bank.hosts())

    running, done_with = asyncio.Event(), asyncio.Event()

    async def slow() -> int:
        running.set()
        await done_with.wait()
        return 1

    hog = asyncio.create_task(runner.run("return await h.slow()", {"h": {"slow": slow}}))
    await running.wait()  # the runner's one run is taken
    busy = await runner.run(
        source, bank.hosts(), continuation=first.continuation, resolutions=approve(first)
    )
    done_with.set()
    await hog
    assert busy.error is not None and busy.error.code == "RUN_BUSY"
    assert tokens.seen == {} and bank.transfers == []
    done = await runner.run(
        source, bank.hosts(), continuation=first.continuation, resolutions=approve(first)
    )
    assert done.status == "ok" and bank.transfers == [3]


async def test_without_consume_once_a_token_is_a_bearer_token() -> None:
    # The documented stateless form, for library users who keep tokens themselves.
    bank = Bank()
    runner = create_runner(secret=SECRET)
    source = "return await bank.transfer(1)"
    first = await runner.run(source, bank.hosts())
    for _ in range(2):
        await runner.run(
            source, bank.hosts(), continuation=first.continuation, resolutions=approve(first)
        )
    assert bank.transfers == [1, 1]


# ---------------------------------------------------------------- run() always answers


@pytest.mark.parametrize(
    "tail",
    [
        "let a = []; for (let i = 0; i < 254; i++) a = [a]; return a",
        "let a = []; for (let i = 0; i < 254; i++) a = [a]; return { a }",
        "let a = []; for (let i = 0; i < 3000; i++) a = [a]; return a",
        "let a = []; for (let i = 0; i < 3000; i++) a = [a]; return [a, ...Array(1500).fill(0)]",
        "try { bank.nope } catch (e) { Object.defineProperty(e, 'did_you_mean', {value: 5}) ; throw e }",
        "const e = new Error('x'); e.did_you_mean = 5; e.path = {a: 1}; throw e",
        "throw {code: 'RUN_BUSY', path: {a: 1}, did_you_mean: 7, message: 'x'}",
    ],
)
async def test_a_guest_cannot_make_run_raise_after_an_approved_call(tail: str) -> None:
    bank = Bank()
    runner = create_runner(secret=SECRET)
    source = f"await bank.transfer(100)\n{tail}"
    first = await runner.run(source, bank.hosts())
    done = await runner.run(
        source, bank.hosts(), continuation=first.continuation, resolutions=approve(first)
    )
    assert done.status == "error" and done.error is not None
    assert done.error.code in ("RUN_VALUE_NOT_SERIALIZABLE", "RUN_EXCEPTION")
    assert bank.transfers == [100]
    ran = [c for c in done.calls if c.path == "bank.transfer"]
    assert ran[0].ok is True and ran[0].decision == "approved"
    assert done.stats.host_calls_executed == 1


@pytest.mark.parametrize(
    "code",
    [
        "RUN_TIMEOUT",
        "RUN_BUSY",
        "RUN_WORKER_CRASHED",
        "RUN_MEMORY_EXCEEDED",
        "RUN_CONTINUATION_INVALID",
        "RUN_INTERNAL_ERROR",
    ],
)
async def test_the_guest_cannot_forge_engine_codes(code: str) -> None:
    bank = Bank()
    runner = create_runner(secret=SECRET)
    # Rewriting the code of an error the engine made is refused (it is read-only)...
    rewritten = await runner.run(
        f"try {{ bank.nope }} catch (e) {{ try {{ e.code = '{code}' }} catch {{}} throw e }}",
        bank.hosts(),
    )
    assert rewritten.error is not None and rewritten.error.code == "RUN_UNKNOWN_MEMBER"
    # ... and an error of the snippet's own keeps its code beside RUN_EXCEPTION.
    own = await runner.run(
        f"const e = new Error('The sandbox process died'); e.code = '{code}'; throw e",
        bank.hosts(),
    )
    assert own.error is not None and own.error.code == "RUN_EXCEPTION"
    assert own.error.guest_code == code
    plain = await runner.run(
        "throw {name: 'InternalError', message: 'out of memory'}", bank.hosts()
    )
    assert plain.error is not None and plain.error.code == "RUN_EXCEPTION"


async def test_only_the_engine_makes_an_out_of_memory_error() -> None:
    runner = create_runner(secret=SECRET, limits=Limits(memory_bytes=16 << 20))
    real = await runner.run("'x'.repeat(2 ** 27)", {})
    assert real.error is not None and real.error.code == "RUN_MEMORY_EXCEEDED"
    copied = await runner.run(
        "try { 'x'.repeat(2 ** 27) } catch (e) { throw new e.constructor('out of memory') }", {}
    )
    assert copied.error is not None and copied.error.code == "RUN_EXCEPTION"
    assert "cannot be constructed" in copied.error.message


async def test_error_text_is_cut_in_the_sandbox() -> None:
    runner = create_runner(secret=SECRET, limits=Limits(memory_bytes=256 << 20))
    result = await runner.run(
        "const e = new Error('x'.repeat(20e6)); e.name = 'N'.repeat(5e6); throw e", {}
    )
    assert result.error is not None and result.error.code == "RUN_EXCEPTION"
    envelope = result.model_dump_json()
    assert len(envelope) < 64 * 1024
    assert "more characters cut" in result.error.message


# ---------------------------------------------------------------- the secret


@pytest.mark.parametrize("content", [b"", b"\n", b"   \n", b"short-secret"])
def test_a_blank_or_short_secret_file_is_refused(tmp_path: Path, content: bytes) -> None:
    (tmp_path / "continuation-secret.key").write_bytes(content)
    with pytest.raises(SecretTooShort, match="at least 32"):
        load_or_create_secret(tmp_path)


def test_a_short_secret_from_anywhere_is_refused() -> None:
    for secret in ("", "x" * 31, " " * 40):
        with pytest.raises(SecretTooShort):
            create_runner(secret=secret)
