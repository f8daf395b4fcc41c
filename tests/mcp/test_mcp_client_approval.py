"""`--approve-via client`: the MCP client's user decides, through elicitation."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
import pytest
from mcp_harness import Server, cli, mcp_server, text_of
from test_mcp_approvals import LIMIT_S, PUBLISH, published

from run_repl.store import SqliteStore

# A real server asking its client, and a person in another process: out of the fast lane.
pytestmark = pytest.mark.slow


class Person:
    """The client's user: answers each question with the next of `answers`
    ("approve", "deny", "decline", "cancel", or "wait": never answers)."""

    def __init__(self, *answers: str) -> None:
        self.answers = list(answers)
        self.questions: list[str] = []
        self.asked = anyio.Event()
        self.withdrawn = False

    async def __call__(self, context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        self.questions.append(params.message)
        self.asked.set()
        answer = self.answers.pop(0)
        if answer == "wait":
            try:
                await anyio.sleep_forever()
            except anyio.get_cancelled_exc_class():
                self.withdrawn = True
                raise
        if answer in ("approve", "deny"):
            return types.ElicitResult(action="accept", content={"decision": answer})
        return types.ElicitResult(action=answer)  # type: ignore[arg-type]


def decided_by(data: Path) -> list[str | None]:
    store = SqliteStore(data / "run-repl.sqlite3")
    try:
        return [a.decided_by for a in store.list_approvals(status=None)]
    finally:
        store.close()


def decided_via(data: Path) -> list[str | None]:
    store = SqliteStore(data / "run-repl.sqlite3")
    try:
        return [a.decided_via for a in store.list_approvals(status=None)]
    finally:
        store.close()


async def run_asking(
    data: Path, person: Person, *args: str, mode: str = "legacy"
) -> tuple[Server, Any]:
    async with mcp_server(
        data, "--approve-via", "client", *args, mode=mode, elicitation=person
    ) as server:
        with anyio.fail_after(LIMIT_S):
            result = await server.call("run", {"code": PUBLISH})
    return server, result


async def test_the_clients_user_approves_and_the_run_finishes(data: Path) -> None:
    person = Person("approve")
    _, result = await run_asking(data, person)
    assert result.structured_content["status"] == "ok"
    assert result.structured_content["value"]["published"] is True
    assert published(data)
    [question] = person.questions
    # The call is shown whole, with the host's question and the snippet.
    assert 'Publish draft draft_01 ("Spring pricing update")?' in question
    assert "Call: documents.publish, 1 argument" in question and '"draft_01"' in question
    assert "documents.listDrafts()" in question
    # Who decided is the person (the settings' name); the channel is kept beside it.
    assert decided_by(data) == ["tester"]
    [via] = decided_via(data)
    assert via is not None and via.startswith("MCP client ") and via.endswith(" over stdio")


async def test_declining_denies_and_the_snippet_hears_it(data: Path) -> None:
    _, result = await run_asking(data, Person("decline"))
    assert result.structured_content["error"]["code"] == "RUN_APPROVAL_DENIED"
    assert not published(data)


async def test_a_dismissed_question_decides_nothing_and_the_terminal_still_can(
    data: Path,
) -> None:
    person = Person("cancel")
    async with mcp_server(
        data, "--approve-via", "client", mode="legacy", elicitation=person
    ) as server:
        outcome: dict[str, Any] = {}

        async def call() -> None:
            outcome["result"] = await server.call("run", {"code": PUBLISH})

        with anyio.fail_after(LIMIT_S):
            async with anyio.create_task_group() as tg:
                tg.start_soon(call)
                await person.asked.wait()
                [approval] = server.pending()
                assert approval.decision is None
                decided = await anyio.to_thread.run_sync(
                    cli, data, "approvals", "approve", approval.id
                )
                assert decided.returncode == 0, decided.stderr
    assert outcome["result"].structured_content["value"]["published"] is True
    assert decided_by(data) == ["tester"]


async def test_the_terminal_deciding_first_withdraws_the_question(data: Path) -> None:
    person = Person("wait")
    async with mcp_server(
        data, "--approve-via", "client", mode="legacy", elicitation=person
    ) as server:
        outcome: dict[str, Any] = {}

        async def call() -> None:
            outcome["result"] = await server.call("run", {"code": PUBLISH})

        with anyio.fail_after(LIMIT_S):
            async with anyio.create_task_group() as tg:
                tg.start_soon(call)
                await person.asked.wait()
                [approval] = server.pending()
                decided = await anyio.to_thread.run_sync(
                    cli, data, "approvals", "deny", approval.id
                )
                assert decided.returncode == 0  # the denial took
            while not person.withdrawn:
                await anyio.sleep(0.02)
    assert outcome["result"].structured_content["error"]["code"] == "RUN_APPROVAL_DENIED"


async def test_a_client_that_cannot_be_asked_leaves_it_to_the_terminal(data: Path) -> None:
    """The 2026-07-28 protocol has no server-to-client requests: nobody is asked there."""
    person = Person("approve")
    server, result = await run_asking(data, person, "--approval-wait", "0.1", mode="auto")
    assert person.questions == []
    assert result.structured_content["status"] == "interrupted"
    assert "approval_status" in text_of(result)["next"]
    assert server.stderr.read_text().count("cannot be asked") == 1


def test_the_question_shows_hidden_characters_and_blank_runs_as_every_screen_does() -> None:
    from run_repl.mcp.client_approval import question
    from run_repl.store import PendingApproval

    hidden = PendingApproval(
        id="int_1",
        run_id="run_1",
        source="return await bank.pay(a, b)",
        path="bank.pay",
        args=["to: alice\u200b", "x" + " " * 40 + "to: mallory"],
        continuation="token",
    )
    text = question(hidden)
    assert "U+200B" in text and "\u200b" not in text
    assert "40 blanks in a row" in text
