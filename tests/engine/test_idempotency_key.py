"""A host call's idempotency key: the same for the same call of the same run chain
across replays, resumes and a second resume of the same continuation (a takeover);
different for different calls and different runs. And the idempotent mark on host
functions, which reaches the interruption a store keeps."""

from __future__ import annotations

from typing import Any

from run_repl import (
    create_runner,
    get_host_function_context,
    idempotent,
    requires_approval,
)
from run_repl.sandbox.approval import ApprovalSpec
from run_repl.sandbox.session.host_functions import build_manifest

SECRET = "k" * 40
SOURCE = "const a = await h.lookup('x'); const b = await h.write(a); return [a, b]"


def approve(result: Any) -> list[dict[str, Any]]:
    return [{"interruption_id": result.interruptions[0].id, "value": True}]


def recording_host(keys: dict[str, list[str]]) -> dict[str, Any]:
    def lookup(name: str) -> str:
        keys.setdefault("lookup", []).append(get_host_function_context().idempotency_key)
        return name.upper()

    @requires_approval(idempotent=True)
    def write(value: str) -> str:
        keys.setdefault("write", []).append(get_host_function_context().idempotency_key)
        return f"wrote {value}"

    return {"h": {"lookup": lookup, "write": write}}


async def test_the_key_is_the_same_on_resume_and_on_a_second_resume_of_one_continuation() -> None:
    runner = create_runner(secret=SECRET)
    keys: dict[str, list[str]] = {}
    host = recording_host(keys)
    first = await runner.run(SOURCE, host)
    assert first.status == "interrupted"
    # The approval policy asks before write runs: only lookup ran live.
    assert len(keys["lookup"]) == 1 and "write" not in keys
    lookup_key = keys["lookup"][0]
    assert isinstance(lookup_key, str) and lookup_key

    resumed = await runner.run(
        SOURCE, host, continuation=first.continuation, resolutions=approve(first)
    )
    assert resumed.status == "ok", resumed.error
    assert resumed.value == ["X", "wrote X"]
    assert resumed.run_id != first.run_id  # a resumed run is a run of its own...
    assert len(keys["write"]) == 1
    # ...but its calls keep their keys: lookup was replayed from the record, so it did
    # not run again; write, run live, has a key of its own.
    assert len(keys["lookup"]) == 1
    write_key = keys["write"][0]
    assert write_key != lookup_key

    # Another process resuming the same continuation again (as a takeover would: no
    # consume-once store here) sees the same key for the same call.
    again = await runner.run(
        SOURCE, host, continuation=first.continuation, resolutions=approve(first)
    )
    assert again.status == "ok", again.error
    assert keys["write"] == [write_key, write_key]

    # A second runner with the same secret (another server of the team) too.
    other = create_runner(secret=SECRET)
    third = await other.run(
        SOURCE, host, continuation=first.continuation, resolutions=approve(first)
    )
    assert third.status == "ok", third.error
    assert keys["write"] == [write_key] * 3


async def test_the_key_of_a_call_the_function_interrupts_itself_holds_across_its_resume() -> None:
    runner = create_runner(secret=SECRET)
    seen: list[tuple[bool, str]] = []

    def login() -> str:
        ctx = get_host_function_context()
        seen.append((ctx.resume is not None, ctx.idempotency_key))
        if ctx.resume is None:
            ctx.interrupt({"kind": "authentication"})
        assert ctx.resume is not None
        return str(ctx.resume.resolution)

    host = {"auth": {"login": login}}
    first = await runner.run("return await auth.login()", host)
    assert first.status == "interrupted"
    resolutions = [{"interruption_id": first.interruptions[0].id, "value": "tok"}]
    done = await runner.run(
        "return await auth.login()", host, continuation=first.continuation, resolutions=resolutions
    )
    assert done.value == "tok"
    assert [resumed for resumed, _ in seen] == [False, True]
    assert seen[0][1] == seen[1][1]


async def test_keys_differ_between_calls_of_a_run_and_between_runs() -> None:
    runner = create_runner(secret=SECRET)
    keys: list[str] = []

    def note(x: int) -> int:
        keys.append(get_host_function_context().idempotency_key)
        return x

    host = {"h": {"note": note}}
    source = "await h.note(1); await h.note(1); await Promise.all([h.note(2), h.note(2)]); return 1"
    first = await runner.run(source, host)
    assert first.status == "ok", first.error
    assert len(keys) == 4 and len(set(keys)) == 4  # same arguments, still other calls
    second = await runner.run(source, host)
    assert second.status == "ok", second.error
    assert len(keys) == 8 and not set(keys[:4]) & set(keys[4:])


async def test_a_chain_of_resumes_keeps_the_keys_of_its_first_run() -> None:
    """Two approvals one after the other: the second resume is of a continuation the
    first resume made; every call keeps the key it had."""
    runner = create_runner(secret=SECRET)
    keys: dict[str, list[str]] = {}

    @requires_approval
    def one() -> int:
        keys.setdefault("one", []).append(get_host_function_context().idempotency_key)
        return 1

    @requires_approval
    def two() -> int:
        keys.setdefault("two", []).append(get_host_function_context().idempotency_key)
        return 2

    host = {"h": {"one": one, "two": two}}
    source = "return (await h.one()) + (await h.two())"
    first = await runner.run(source, host)
    second = await runner.run(
        source, host, continuation=first.continuation, resolutions=approve(first)
    )
    assert second.status == "interrupted" and keys["one"] and "two" not in keys
    third = await runner.run(
        source, host, continuation=second.continuation, resolutions=approve(second)
    )
    assert third.status == "ok" and third.value == 3
    # one ran once (replayed the second time); a second resume of the second token runs
    # two again with its key.
    again = await runner.run(
        source, host, continuation=second.continuation, resolutions=approve(second)
    )
    assert again.value == 3
    assert len(keys["one"]) == 1 and len(keys["two"]) == 2
    assert keys["two"][0] == keys["two"][1] != keys["one"][0]


async def test_the_idempotent_mark_reaches_the_interruption() -> None:
    runner = create_runner(secret=SECRET)

    @requires_approval(idempotent=True, message="Send it?")
    def send() -> str:
        return "sent"

    @requires_approval
    def publish() -> str:
        return "published"

    @idempotent
    def ask_login() -> str:
        ctx = get_host_function_context()
        if ctx.resume is None:
            ctx.interrupt({"kind": "authentication"})
        return "in"

    def plain_ask() -> str:
        ctx = get_host_function_context()
        if ctx.resume is None:
            ctx.interrupt({"kind": "authentication"})
        return "in"

    host = {"h": {"send": send, "publish": publish, "login": ask_login, "plain": plain_ask}}
    result = await runner.run(
        "return await Promise.all([h.send(), h.publish(), h.login(), h.plain()])", host
    )
    assert result.status == "interrupted"
    by_path = {i.path: i for i in result.interruptions or []}
    assert by_path["h.send"].idempotent is True
    assert by_path["h.send"].payload["message"] == "Send it?"
    assert by_path["h.publish"].idempotent is False
    assert by_path["h.login"].idempotent is True
    assert by_path["h.plain"].idempotent is False
    # In the envelope an idempotent interruption says so; the others stay as they were.
    dumped = {i["path"]: i for i in result.model_dump()["interruptions"]}
    assert dumped["h.send"]["idempotent"] is True
    assert "idempotent" not in dumped["h.publish"]


def test_every_decorator_form_still_marks_as_before() -> None:
    @requires_approval
    def bare() -> None: ...

    @requires_approval()
    def called() -> None: ...

    @requires_approval(message="Sure?")
    def with_message() -> None: ...

    @requires_approval(message=lambda x: f"Do {x}?")
    def with_function(x: str) -> None: ...

    @requires_approval(idempotent=True)
    def safe() -> None: ...

    @idempotent
    def plain_safe() -> None: ...

    @idempotent()
    def plain_safe_called() -> None: ...

    def unmarked() -> None: ...

    assert bare.__run_repl_approval__ == ApprovalSpec(None)  # type: ignore[attr-defined]
    assert called.__run_repl_approval__ == ApprovalSpec(None)  # type: ignore[attr-defined]
    assert with_message.__run_repl_approval__ == ApprovalSpec("Sure?")  # type: ignore[attr-defined]
    assert with_function.__run_repl_approval__.message("a") == "Do a?"  # type: ignore[attr-defined]
    manifest = build_manifest(
        {
            "n": {
                "bare": bare,
                "called": called,
                "with_message": with_message,
                "with_function": with_function,
                "safe": safe,
                "plain_safe": plain_safe,
                "plain_safe_called": plain_safe_called,
                "unmarked": unmarked,
            }
        }
    )
    f = manifest.functions
    assert all(f[f"n.{n}"].approval is not None for n in ("bare", "called", "with_message", "safe"))
    assert f["n.plain_safe"].approval is None and f["n.unmarked"].approval is None
    assert {p for p, fn in f.items() if fn.idempotent} == {
        "n.safe",
        "n.plain_safe",
        "n.plain_safe_called",
    }
