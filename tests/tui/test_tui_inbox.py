"""The approvals inbox (F6): every open approval in the store, from any process, live,
decided with the inline prompt's care, through the store's flow, never blocking."""

from __future__ import annotations

import asyncio
import sqlite3
import time
from pathlib import Path
from typing import Any

import forked_cli
import pytest
from textual.widgets import DataTable, Static
from tui_helpers import (
    SIZE,
    make_app,
    open_inbox,
    run_to_end,
    screen_text,
    set_source,
    settle,
    until,
)

from run_repl.present import CALLS_MADE_SHOWN
from run_repl.present.styled import plain, plain_lines
from run_repl.sandbox.result import RunErrorInfo, RunResult
from run_repl.store import PendingApproval
from run_repl.tui.app import RunReplApp
from run_repl.tui.approvals_inbox import (
    ApprovalsInbox,
    InboxRow,
    age_text,
    blocked_reason,
    outcome_lines,
)
from run_repl.tui.components.approval_prompt import ApprovalPrompt
from run_repl.tui.components.status_bar import StatusBar
from run_repl.tui.messages import RunInterrupted
from run_repl.tui.screens.approvals import ApprovalsScreen, ConfirmRecover
from run_repl.workspace import open_workspace

PUBLISH_FIRST = "const d = await documents.listDrafts(); return await documents.publish(d[0].id)"
PUBLISH_SECOND = "const d = await documents.listDrafts(); return await documents.publish(d[1].id)"


def published(data_dir: Path, draft: str) -> bool:
    db = sqlite3.connect(data_dir / "demo.sqlite3")
    try:
        return bool(db.execute("SELECT published FROM drafts WHERE id = ?", (draft,)).fetchone()[0])
    finally:
        db.close()


async def cli(data_dir: Path, *args: str, stdin: str | None = None) -> tuple[int, str, str]:
    """`run-repl ARGS` in another process, on the same data directory."""
    proc = await asyncio.create_subprocess_exec(
        *forked_cli.command(*args, "--data-dir", str(data_dir)),
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    out, err = await proc.communicate(stdin.encode() if stdin is not None else None)
    return proc.returncode or 0, out.decode(), err.decode()


async def listed(app: RunReplApp, condition: Any) -> None:
    """Wait for the watcher's lists until `condition(approvals)` holds (a list comes at each
    change in the store; the bound only fails a test that would hang)."""

    async def wait() -> None:
        while not condition(app.main.approvals.approvals):
            await app.main.approvals.next_change()

    await asyncio.wait_for(wait(), timeout=60)


def inbox(app: RunReplApp) -> ApprovalsScreen:
    screen = app.screen
    assert isinstance(screen, ApprovalsScreen), screen
    return screen


def text_of(app: RunReplApp, selector: str) -> str:
    return str(app.screen.query_one(selector, Static).content)


def rows(app: RunReplApp) -> list[str]:
    table = inbox(app).query_one("#inbox-list", DataTable)
    return [str(table.coordinate_to_cell_key((i, 0)).row_key.value) for i in range(table.row_count)]


async def interrupted_elsewhere(data_dir: Path, source: str = PUBLISH_FIRST) -> str:
    """Run `source` with another workspace (its own store connection): its approval id."""
    ws = open_workspace(None, data_dir_override=str(data_dir))
    try:
        result = await ws.run(source)
    finally:
        ws.close()
    assert result.status == "interrupted", result.error
    return result.interruptions[0].id


# ---------------------------------------------------------------- the story of the issue
async def test_an_approval_from_another_process_is_approved_in_the_inbox(
    data_dir: Path, no_arm_delay: None
) -> None:
    """`run-repl run` in another process pauses on documents.publish; the inbox shows it
    live, with its arguments and the call already made; y approves it there, the run
    resumes, the draft is really published, and the approval leaves the list."""
    app = make_app(data_dir)
    async with app.run_test(size=SIZE) as pilot:
        await listed(app, lambda approvals: approvals == [])
        await open_inbox(pilot)
        assert "No approvals wait" in text_of(app, "#inbox-count")

        code, _out, err = await cli(data_dir, "run", "-", stdin=PUBLISH_FIRST)
        assert code == 3, err  # interrupted: waiting for approval
        await listed(app, lambda approvals: len(approvals) == 1)
        await pilot.pause()
        approval = app.main.approvals.approvals[0]
        assert approval.path == "documents.publish" and approval.args == ["draft_01"]
        assert rows(app) == [approval.id]
        assert app.query_one(StatusBar).approvals == 1
        await settle(pilot)  # the run's record is read for the detail
        detail = text_of(app, "#inbox-detail-text")
        assert 'Publish draft draft_01 ("Spring pricing update")?' in detail
        assert '"draft_01"' in detail and "arg 1 of 1" in detail
        assert "calls already made (1):" in detail and "documents.listDrafts()" in detail
        assert "1 | const d = await documents.listDrafts()" in detail

        await pilot.press("y")
        await settle(pilot)
        assert published(data_dir, "draft_01")
        outcomes = text_of(app, "#inbox-outcomes")
        assert "approved documents.publish" in outcomes and "the run resumed: ok" in outcomes
        await listed(app, lambda approvals: approvals == [])
        await pilot.pause()
        assert rows(app) == []
        assert app.query_one(StatusBar).approvals == 0
    final = app.ws.store.get_approval(approval.id)
    assert final is not None and final.status == "approved" and final.outcome == "ok"


async def test_an_approval_asked_after_many_calls_lists_the_latest_and_counts_the_rest(
    data_dir: Path,
) -> None:
    """A run that made hundreds of calls before asking: the detail counts them, names
    the earlier ones by function and lists only the latest whole (it is drawn again at
    every move of the cursor and every change in the store)."""
    many = 3 * CALLS_MADE_SHOWN
    source = (
        f"let d; for (let i = 0; i < {many}; i++) d = await documents.listDrafts();\n"
        "return await documents.publish(d[0].id)"
    )
    await interrupted_elsewhere(data_dir, source)
    app = make_app(data_dir)
    async with app.run_test(size=SIZE) as pilot:
        await listed(app, lambda approvals: len(approvals) == 1)
        await open_inbox(pilot)
        await settle(pilot)  # the run's record is read for the detail
        detail = text_of(app, "#inbox-detail-text").splitlines()
        at = detail.index(f"  calls already made ({many}):")
        earlier = many - CALLS_MADE_SHOWN
        assert detail[at + 1] == f"    … {earlier} earlier: documents.listDrafts ×{earlier}"
        listed_calls = [x for x in detail if x.startswith("    #")]
        assert len(listed_calls) == CALLS_MADE_SHOWN
        assert listed_calls[0].startswith(f"    #{earlier + 1}  documents.listDrafts()")
        assert listed_calls[-1].startswith(f"    #{many}  documents.listDrafts()")
        # The question itself is still there whole, after the calls.
        assert "1 | let d; for (let i = 0;" in "\n".join(detail)


async def test_a_denial_in_the_inbox_reaches_the_snippet(
    data_dir: Path, no_arm_delay: None
) -> None:
    approval_id = await interrupted_elsewhere(data_dir)
    app = make_app(data_dir)
    async with app.run_test(size=SIZE) as pilot:
        await listed(app, lambda approvals: len(approvals) == 1)
        await open_inbox(pilot)
        await pilot.press("n")
        await settle(pilot)
        outcomes = text_of(app, "#inbox-outcomes")
        assert "denied documents.publish" in outcomes
        assert "RUN_APPROVAL_DENIED" in outcomes
    assert not published(data_dir, "draft_01")
    assert app.ws.store.get_approval(approval_id).status == "denied"


async def test_earlier_approvals_are_counted_and_announced_at_start(data_dir: Path) -> None:
    await interrupted_elsewhere(data_dir)
    app = make_app(data_dir)
    async with app.run_test(size=SIZE) as pilot:
        await listed(app, lambda approvals: len(approvals) == 1)
        await pilot.pause()
        assert app.query_one(StatusBar).approvals == 1
        assert "1 approval · F6" in str(app.query_one(StatusBar).render())
        toasts = [n.message for n in app._notifications]
        assert any("F6 opens the inbox" in m for m in toasts), toasts


# ---------------------------------------------------------------- deliberate, as the prompt
async def test_keys_wait_after_the_inbox_opens_and_after_the_approval_changes(
    data_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from run_repl.tui.components import approval_prompt

    monkeypatch.setattr(approval_prompt, "ARM_SECONDS", 3600.0)  # never armed in this test
    await interrupted_elsewhere(data_dir)
    app = make_app(data_dir)
    async with app.run_test(size=SIZE) as pilot:
        await listed(app, lambda approvals: len(approvals) == 1)
        await open_inbox(pilot)
        await pilot.press("y", "n", "a", "enter")
        await settle(pilot)
        assert app.main.approvals.deciding == set() and app.main.approvals.outcomes == []
        assert inbox(app).confirming is None
    assert app.ws.store.list_approvals()[0].status == "pending"
    assert not published(data_dir, "draft_01")


async def test_the_selection_stays_on_its_approval_when_others_come_and_go(
    data_dir: Path, no_arm_delay: None
) -> None:
    first = await interrupted_elsewhere(data_dir, PUBLISH_FIRST)
    app = make_app(data_dir)
    async with app.run_test(size=SIZE) as pilot:
        await listed(app, lambda approvals: len(approvals) == 1)
        await open_inbox(pilot)
        screen = inbox(app)
        assert screen.selected == first
        armed_at = screen.shown_at
        second = await interrupted_elsewhere(data_dir, PUBLISH_SECOND)
        await listed(app, lambda approvals: len(approvals) == 2)
        await pilot.pause()
        assert rows(app) == [first, second]
        assert screen.selected == first and screen.shown_at == armed_at  # same one: still armed
        await pilot.press("down")
        assert screen.selected == second and screen.shown_at > armed_at  # another: waits again


async def test_approve_for_the_session_asks_once_more(data_dir: Path, no_arm_delay: None) -> None:
    await interrupted_elsewhere(data_dir)
    app = make_app(data_dir)
    async with app.run_test(size=SIZE) as pilot:
        await listed(app, lambda approvals: len(approvals) == 1)
        await open_inbox(pilot)
        await pilot.press("a")
        assert inbox(app).confirming is not None
        assert "enter: yes" in text_of(app, "#inbox-keys")
        await pilot.press("x")  # any other key says no
        assert inbox(app).confirming is None
        assert "documents.publish" not in app.main.runs.session_approvals
        await pilot.press("a", "enter")
        await settle(pilot)
        assert "documents.publish" in app.main.runs.session_approvals
        assert "approved documents.publish" in text_of(app, "#inbox-outcomes")
    assert published(data_dir, "draft_01")


async def test_an_approval_of_another_host_is_not_decided_here(
    data_dir: Path, no_arm_delay: None
) -> None:
    app = make_app(data_dir)
    app.ws.store.add_approvals(
        [
            PendingApproval(
                id="int_other",
                run_id="run_other",
                source="await bank.transfer(1)",
                host="bank.py",
                path="bank.transfer",
                args=[1],
                message="Transfer?",
                continuation="tok-other",
            )
        ]
    )
    async with app.run_test(size=SIZE) as pilot:
        await listed(app, lambda approvals: len(approvals) == 1)
        await open_inbox(pilot)
        await pilot.press("y")
        await settle(pilot)
        assert app.main.approvals.deciding == set()
        detail = text_of(app, "#inbox-detail-text")
        assert "host 'bank.py'" in detail and "--host bank.py" in detail
        assert any("--host bank.py" in n.message for n in app._notifications)
    assert app.ws.store.get_approval("int_other").status == "pending"


@pytest.mark.slow
async def test_a_stuck_approval_is_recovered_after_a_confirmation(data_dir: Path) -> None:
    approval_id = await interrupted_elsewhere(data_dir)
    app = make_app(data_dir)
    store = app.ws.store
    # Declared idempotent, so a lapsed resume waits for a takeover rather than reading
    # unfinished at once (the next test): until then it is stuck, and a person may end it.
    db = sqlite3.connect(store.path)  # type: ignore[attr-defined]
    with db:
        db.execute("UPDATE approvals SET idempotent = 1 WHERE id = ?", (approval_id,))
    db.close()
    # Another approver's resume passed its guard, then its process died: its lease ran out.
    claim = store.claim_batch(
        {approval_id: True}, claim_id="clm_dead", claimed_by="alice", decided_by="alice", ttl_s=-1
    )
    store.start_batch(claim)
    async with app.run_test(size=SIZE) as pilot:
        await listed(app, lambda approvals: [a.state() for a in approvals] == ["stuck"])
        await open_inbox(pilot)
        await pilot.pause()
        assert "STUCK" in text_of(app, "#inbox-detail-text")
        assert "R recover" in text_of(app, "#inbox-keys")
        await pilot.press("y")  # a stuck one is never decided
        await pilot.press("R")
        assert isinstance(app.screen, ConfirmRecover)
        assert "Recovering records that its calls may have run" in screen_text(app)
        await pilot.press("escape")  # escape is Cancel too
        assert isinstance(app.screen, ApprovalsScreen)
        await pilot.press("R")
        await pilot.press("enter")  # Cancel has the focus: nothing happens
        await pilot.pause()
        assert isinstance(app.screen, ApprovalsScreen)
        assert store.get_approval(approval_id).state() == "stuck"
        await pilot.press("R", "left", "enter")  # to Recover, then enter
        await settle(pilot)
        assert "recovered" in text_of(app, "#inbox-outcomes")
        await listed(app, lambda approvals: approvals == [])
    assert store.get_approval(approval_id).status == "unfinished"
    assert not published(data_dir, "draft_01")  # recovering runs nothing


@pytest.mark.slow
async def test_a_resume_that_died_after_its_guard_reads_unfinished_at_once(
    data_dir: Path,
) -> None:
    # The old rule: stuck in the inbox until someone recovered it by hand.
    approval_id = await interrupted_elsewhere(data_dir)
    app = make_app(data_dir)
    store = app.ws.store
    claim = store.claim_batch(
        {approval_id: True}, claim_id="clm_dead", claimed_by="alice", decided_by="alice", ttl_s=-1
    )
    store.start_batch(claim)
    async with app.run_test(size=SIZE) as pilot:
        await listed(app, lambda approvals: approvals == [])  # nothing left to decide
        await settle(pilot)
    ended = store.get_approval(approval_id)
    assert ended.status == "unfinished" and ended.outcome == "unknown"
    assert "alice" in (ended.note or "") and "lease ran out" in (ended.note or "")
    assert not published(data_dir, "draft_01")


# ---------------------------------------------------------------- the run on this IDE's screen
@pytest.mark.slow
async def test_the_run_on_screen_is_decided_in_the_inbox_as_by_its_prompt(
    data_dir: Path, no_arm_delay: None
) -> None:
    app = make_app(data_dir)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        await set_source(pilot, PUBLISH_FIRST)
        await run_to_end(pilot)
        prompt = app.query_one(ApprovalPrompt)
        assert prompt.current is not None
        await listed(app, lambda approvals: len(approvals) == 1)
        await open_inbox(pilot)
        await pilot.pause()
        assert "this IDE" in str(inbox(app).query_one("#inbox-list", DataTable).get_row_at(0)[4])
        await pilot.press("y")
        await settle(pilot)
        assert prompt.current is None
        assert app.main.runs.result.status == "ok"  # resumed here: the panels show it
        assert app.main.runs.result.value["published"] is True
    assert published(data_dir, "draft_01")


async def test_the_prompt_drops_what_another_process_decided(data_dir: Path) -> None:
    app = make_app(data_dir)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        await set_source(pilot, PUBLISH_FIRST)
        await run_to_end(pilot)
        prompt = app.query_one(ApprovalPrompt)
        it = prompt.current
        assert it is not None
        await listed(app, lambda approvals: [a.id for a in approvals] == [it.id])
        code, _out, err = await cli(data_dir, "approvals", "approve", it.id)
        assert code == 0, err
        await listed(app, lambda approvals: approvals == [])
        await until(pilot, lambda: prompt.current is None)
        assert any("decided elsewhere" in n.message for n in app._notifications)
        assert not app.main.running
    assert published(data_dir, "draft_01")


# ---------------------------------------------------------------- the words (no app)
def approval(**fields: Any) -> PendingApproval:
    base: dict[str, Any] = {
        "id": "int_1",
        "run_id": "run_1",
        "source": "await docs.publish('d1')",
        "host": "demo",
        "path": "docs.publish",
        "args": ["d1"],
        "message": "Publish d1?",
        "continuation": "tok",
    }
    return PendingApproval(**{**base, **fields})


def a_list(*approvals: PendingApproval) -> Any:
    from run_repl.tui.messages import ApprovalsChanged

    return ApprovalsChanged(version=1, approvals=list(approvals))


def test_the_inbox_reads_here_from_the_prompt_and_says_what_a_list_changes() -> None:
    """The bookkeeping of the store's lists, without an app: which of the prompt's
    approvals were decided elsewhere, and which new ones of other runs to announce (held
    while a run of ours runs, since they may be its own)."""
    asked: set[str] = set()
    inbox = ApprovalsInbox(None, None, asking=lambda: frozenset(asked))  # type: ignore[arg-type]
    ours, theirs = approval(id="int_1"), approval(id="int_2", run_id="run_2")
    asked.add("int_1")
    assert inbox.here == {"int_1"}  # read from the prompt, never copied
    first = inbox.news(a_list(ours), [ours], decided=set(), running=True)
    assert first is not None and first.waiting_note and first.drop == [] == first.announce
    # Another run's approval, heard while ours runs: held, then said once it has ended.
    held = inbox.news(a_list(ours, theirs), [ours], decided=set(), running=True)
    assert held is not None and held.announce == [] and not held.waiting_note
    assert [a.id for a in inbox.deferred()] == ["int_2"]
    assert inbox.deferred() == []  # once
    # Ours, listed open before, now decided elsewhere: the prompt stops asking it.
    decided = approval(id="int_1", status="approved")
    news = inbox.news(a_list(decided, theirs), [ours], decided=set(), running=False)
    assert news is not None and news.drop == ["int_1"]
    # ... unless this IDE decided it (its own resume carries it out).
    inbox.seen_open.add("int_1")
    mine = inbox.news(a_list(decided, theirs), [ours], decided={"int_1"}, running=False)
    assert mine is not None and mine.drop == []
    # An unreadable store changes nothing and says nothing.
    from run_repl.tui.messages import ApprovalsChanged

    assert (
        inbox.news(ApprovalsChanged(2, None, problem="gone"), [], decided=set(), running=False)
        is None
    )
    assert inbox.problem == "gone" and [a.id for a in inbox.approvals] == ["int_1", "int_2"]


def test_rows_and_ages() -> None:
    now = time.time()
    row = InboxRow.of(approval(created_at=now - 130), here=frozenset({"int_1"}), now=now)
    assert (row.state, row.age, row.path, row.args, row.origin) == (
        "pending",
        "2 min",
        "docs.publish",
        '("d1")',
        "this IDE",
    )
    assert InboxRow.of(approval(), now=now).origin == "run_1"
    assert [age_text(now - s, now) for s in (5, 59, 3600 * 5, 86_400 * 3)] == [
        "5 s",
        "59 s",
        "5 h",
        "3 d",
    ]


def test_why_an_approval_cannot_be_decided_here() -> None:
    assert blocked_reason(approval(), "demo") is None
    assert "being carried out" in (blocked_reason(approval(), "demo", deciding=True) or "")
    other = blocked_reason(approval(host="bank.py"), "demo") or ""
    assert "run-repl approvals approve int_1 --host bank.py" in other
    queued = approval(decision="approve", decided_by="bob")
    assert "queued: approve by bob" in (blocked_reason(queued, "demo") or "")
    why = "decided, but no live process with host 'demo' ... `run-repl approvals resume int_1`"
    nobody = blocked_reason(queued, "demo", stranded=why) or ""
    assert "queued: approve by bob" in nobody and why in nobody  # not silent


def test_outcome_lines_say_what_the_resume_did() -> None:
    ok = RunResult(status="ok", value={"published": True}, duration_ms=12.0, run_id="run_9")
    text = plain_lines(outcome_lines("approved", approval(), ok, queued_behind="alice@h pid 1"))
    assert text.splitlines()[0] == 'approved docs.publish("d1")  (int_1)'
    assert "alice@h pid 1 was resuming this run" in text
    assert 'value: {"published": true}' in text and "run run_9 is in the history" in text
    denied = RunResult(
        status="error", error=RunErrorInfo(code="RUN_APPROVAL_DENIED", message="Denied.\nmore")
    )
    assert "RUN_APPROVAL_DENIED: Denied." in plain_lines(
        outcome_lines("denied", approval(), denied)
    )
    failed = outcome_lines("approved", approval(), error="Approval int_1 is already denied")
    assert plain(failed[1]) == "  not decided: Approval int_1 is already denied"


async def test_a_change_heard_while_the_screen_comes_down_is_dropped(data_dir: Path) -> None:
    """The watcher can report a change after the prompt is gone (the app closing): the
    handler drops it instead of raising NoMatches into the app."""
    from run_repl.tui.messages import ApprovalsChanged

    app = make_app(data_dir)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await app.query_one(ApprovalPrompt).remove()
        app.main._approvals_changed(ApprovalsChanged(version=99, approvals=[]))
        await pilot.pause()
        assert app.return_code is None and app._exception is None


async def test_down_then_y_in_one_burst_decides_nothing(data_dir: Path) -> None:
    """Keys that arrive together (a paste, a fast typist): `y` right behind `down` meets
    an approval whose detail was not yet on screen; it waits, as after any change."""
    from textual import events

    first = await interrupted_elsewhere(data_dir, PUBLISH_FIRST)
    await interrupted_elsewhere(data_dir, PUBLISH_SECOND)
    app = make_app(data_dir)
    async with app.run_test(size=SIZE) as pilot:
        await listed(app, lambda approvals: len(approvals) == 2)
        await open_inbox(pilot)
        screen = inbox(app)
        await until(pilot, lambda: rows(app)[:1] == [first])
        screen.shown_at -= 3600  # the first has been on screen long enough to decide
        app.post_message(events.Key("down", None))
        app.post_message(events.Key("y", "y"))
        await settle(pilot)
        assert app.main.approvals.deciding == set() and app.main.approvals.outcomes == []
    assert {a.status for a in app.ws.store.list_approvals()} == {"pending"}
    assert not published(data_dir, "draft_02")


async def test_an_approvals_change_while_the_inbox_is_half_built_waits_for_it(
    data_dir: Path,
) -> None:
    """Heard under load too: a change that came when the inbox's list was mounted but
    its detail not yet looked for the detail, and the app ended (NoMatches). A change
    comes at every turn of the loop while the inbox is built; the inbox shows it."""
    approval_id = await interrupted_elsewhere(data_dir)
    app = make_app(data_dir)
    async with app.run_test(size=SIZE) as pilot:
        await listed(app, lambda approvals: len(approvals) == 1)
        app.action_approvals()
        half_built = 0
        for _ in range(10_000):
            screen = app.screen
            if isinstance(screen, ApprovalsScreen):
                if screen.is_mounted:
                    break
                half_built += bool(screen.query("#inbox-list")) and not screen.query(
                    "#inbox-detail-text"
                )
            app.main._refresh_inbox_screen()
            await asyncio.sleep(0)
        assert half_built, "the change never came while the inbox was half built"
        await until(pilot, lambda: inbox(app).selected == approval_id)
        assert "Publish draft draft_01" in text_of(app, "#inbox-detail-text")
    assert app.return_code is None and app._exception is None


async def test_an_approvals_change_as_the_inbox_opens_waits_for_it(data_dir: Path) -> None:
    """Heard under load in the suite: a change arriving after F6 pushed the inbox but
    before it was built made its refresh look for a list that did not exist yet, and
    the app ended. The inbox shows the change when it is built."""
    approval_id = await interrupted_elsewhere(data_dir)
    app = make_app(data_dir)
    async with app.run_test(size=SIZE) as pilot:
        await listed(app, lambda approvals: len(approvals) == 1)
        app.action_approvals()  # pushed; built on the next turns of the loop
        app.main._refresh_inbox_screen()  # the change heard in that moment
        await pilot.pause()
        assert isinstance(app.screen, ApprovalsScreen)
        assert inbox(app).selected == approval_id
        assert "Publish draft draft_01" in text_of(app, "#inbox-detail-text")
    assert app.return_code is None and app._exception is None


@pytest.mark.slow
@pytest.mark.parametrize("with_another", [False, True])
async def test_a_runs_own_approval_is_never_announced_as_another_runs(
    data_dir: Path, with_another: bool
) -> None:
    """The store shows a paused run's approval a moment before the run's end reaches the
    app, so the watcher's list can come first (seen in CI as a toast in a snapshot). The
    approval is this run's: the prompt asks it, no toast says it came from another run;
    one that another run made meanwhile is announced, once this run's end is in."""
    app = make_app(data_dir)
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: app.main.approvals.listed)  # the list at start is in
        held: list[RunInterrupted] = []
        post = app.main.post_message

        def hold(message: Any) -> bool:
            if isinstance(message, RunInterrupted):
                held.append(message)
                return True
            return post(message)

        app.main.post_message = hold  # type: ignore[method-assign]
        await set_source(pilot, PUBLISH_FIRST)
        await pilot.press("ctrl+j")
        await until(pilot, lambda: held)
        if with_another:
            await interrupted_elsewhere(data_dir, PUBLISH_SECOND)
        expected = 2 if with_another else 1
        await listed(app, lambda approvals: len(approvals) == expected)  # the watcher's list
        assert not [n for n in app._notifications if "another run" in n.message]
        app.main.post_message = post  # type: ignore[method-assign]
        post(held[0])  # then the run's end
        await settle(pilot)
        assert app.query_one(ApprovalPrompt).current is not None
        toasts = [n.message for n in app._notifications if "another run" in n.message]
        if with_another:
            assert toasts == [
                "1 new approval(s) from another run (documents.publish): F6 opens the inbox."
            ]
        else:
            assert toasts == []
