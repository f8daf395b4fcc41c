"""A run this IDE started, paused for approval and decided elsewhere (another IDE's inbox,
`run-repl approvals approve` in a shell, an MCP client): the IDE hears every change of its
approvals through the store's change watch, says it in words, and shows the resumed run
as if it had resumed here (its logs, calls and value; a second question in the prompt).
Nothing about that arrival decides anything."""

from __future__ import annotations

import asyncio
import os
import secrets
import sqlite3
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, cast

import forked_cli
import pytest
from tui_helpers import SIZE, jump, make_app, run_to_end, set_source, settle

from run_repl.store import PendingApproval
from run_repl.store.approvals.flow import recover
from run_repl.store.records import CallFacts, ResumeReport
from run_repl.tui.app import RunReplApp
from run_repl.tui.approvals_inbox import ApprovalsInbox
from run_repl.tui.components.approval_prompt import ApprovalPrompt
from run_repl.tui.components.error_view import RunErrorView
from run_repl.tui.components.status_bar import StatusBar
from run_repl.tui.messages import ApprovalsChanged
from run_repl.tui.resumed_elsewhere import run_progress
from run_repl.workspace import Workspace, open_workspace

LOGGED_PUBLISH = (
    "console.log('before the question');\n"
    "const d = await documents.listDrafts();\n"
    "const r = await documents.publish(d[0].id);\n"
    "console.log('after the answer', r.published);\n"
    "return Array.from({length: 3000}, (_, i) => ({i, published: r.published}))"
)
TWO_PUBLISHES = (
    "const d = await documents.listDrafts();\n"
    "await documents.publish(d[0].id);\n"
    "console.log('first one done');\n"
    "return await documents.publish(d[1].id)"
)
PUBLISH_FIRST = "const d = await documents.listDrafts(); return await documents.publish(d[0].id)"


def published(data_dir: Path, draft: str) -> bool:
    db = sqlite3.connect(data_dir / "demo.sqlite3")
    try:
        return bool(db.execute("SELECT published FROM drafts WHERE id = ?", (draft,)).fetchone()[0])
    finally:
        db.close()


async def cli(data_dir: Path, *args: str) -> tuple[int, str, str]:
    """`run-repl ARGS` in another process, on the same data directory."""
    proc = await asyncio.create_subprocess_exec(
        *forked_cli.command(*args, "--data-dir", str(data_dir)),
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        env={**os.environ, "RUN_REPL_APPROVER": "carol"},
    )
    out, err = await proc.communicate()
    return proc.returncode or 0, out.decode(), err.decode()


@pytest.fixture(params=["sqlite", "postgres"])
def team_dir(
    request: pytest.FixtureRequest, data_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[Path]:
    """The data directory, its store SQLite in it or a team's PostgreSQL schema of its
    own (every workspace and CLI process of the test opens the same one)."""
    if request.param == "sqlite":
        yield data_dir
        return
    url = os.environ.get("RUN_REPL_TEST_PG_URL")
    if not url:
        if os.environ.get("RUN_REPL_CI"):
            pytest.fail("no PostgreSQL test server in CI (RUN_REPL_TEST_PG_URL)")
        pytest.skip("no PostgreSQL test server (RUN_REPL_TEST_PG_URL)")
    schema = f"t_tui_{secrets.token_hex(6)}"
    config = Path(os.environ["RUN_REPL_CONFIG_DIR"])
    config.mkdir(parents=True, exist_ok=True)
    (config / "config.toml").write_text(f'[store]\nschema = "{schema}"\n')
    monkeypatch.setenv("RUN_REPL_STORE_URL", url)
    yield data_dir
    import psycopg
    from psycopg import sql

    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(sql.SQL("DROP SCHEMA IF EXISTS {} CASCADE").format(sql.Identifier(schema)))


def other_workspace(data_dir: Path) -> Workspace:
    """Another approver's workspace: its own store object on the same data directory."""
    return open_workspace(None, data_dir_override=str(data_dir))


async def until_true(pilot: Any, condition: Callable[[], bool], rounds: int = 6000) -> None:
    """Process messages until `condition()` holds: the change comes through the store's
    watch from another store object, so this waits on the state, a bounded number of
    rounds (the bound only fails a test that would hang)."""
    for _ in range(rounds):
        if condition():
            return
        await pilot.pause(0.01)
    raise AssertionError("the IDE never reached the expected state")


async def paused_here(app: RunReplApp, pilot: Any, source: str) -> str:
    """Run `source` in the IDE until its prompt asks; the approval id, as the store has it."""
    await pilot.pause()
    await set_source(pilot, source)
    await run_to_end(pilot)
    prompt = app.query_one(ApprovalPrompt)
    assert prompt.current is not None
    approval_id = prompt.current.id
    # The inbox's watcher has listed it open: from now on a change is someone's decision.
    await until_true(pilot, lambda: [a.id for a in app.main.approvals.approvals] == [approval_id])
    return approval_id


def status(app: RunReplApp) -> StatusBar:
    return app.query_one(StatusBar)


def log_texts(app: RunReplApp) -> list[str]:
    return [x.text for x in app.main.logs.lines]


# ---------------------------------------------------------------- the result, shown here
async def test_a_run_approved_in_a_shell_shows_its_logs_calls_and_value_here(
    team_dir: Path,
) -> None:
    """`run-repl approvals approve ID` in another process resumes the IDE's paused run; the
    IDE shows that resumed run as its own: the logs after the answer, the publish call,
    the value (3000 items, paged from the store by its value_ref) and the status."""
    app = make_app(team_dir)
    assert app.ws.persistent and not app.ws.warnings, app.ws.warnings  # the store asked for
    async with app.run_test(size=SIZE) as pilot:
        approval_id = await paused_here(app, pilot, LOGGED_PUBLISH)
        code, _out, err = await cli(team_dir, "approvals", "approve", approval_id)
        assert code == 0, err
        await until_true(pilot, lambda: status(app).state == "ok")
        await settle(pilot)
        stored = app.ws.store.get_approval(approval_id)
        assert stored is not None and stored.status == "approved"
        result = app.main.runs.result
        assert result is not None and result.run_id == stored.resumed_run_id
        # Its logs: the replayed one and the one after the answer, under a line saying where.
        logs = log_texts(app)
        assert any("approved by carol" in t and "resumed in" in t for t in logs), logs
        assert "before the question" in logs and "after the answer true" in logs
        # Its calls: the publish ran (in the other process), the list was replayed.
        calls = {c.path: c for c in app.main.calls.calls.values()}
        assert calls["documents.publish"].ok is True
        # Its value: the first page, and the next one read from the store.
        view = app.main.value_view
        assert view.page_items[0] == {"i": 0, "published": True}
        await jump(pilot, "v")  # the jump overlay, to the value panel
        await settle(pilot)
        offset = view.page_offset
        await pilot.press("n")
        await settle(pilot)
        assert view.page_offset > offset
        assert view.page_items[0] == {"i": view.page_offset, "published": True}
        # The status line says what it is and where it ran.
        assert "resumed in" in status(app).detail and "carol" in status(app).detail
        assert not app.main.running
        assert app.query_one(ApprovalPrompt).current is None
    assert published(team_dir, "draft_01")


async def test_every_step_of_a_resume_elsewhere_is_said_in_words(data_dir: Path) -> None:
    """Decided, being resumed (by whom, where), then an end with outcome unknown: each
    step reaches the status line as the other process makes it."""
    app = make_app(data_dir)
    other = other_workspace(data_dir)
    try:
        async with app.run_test(size=SIZE) as pilot:
            approval_id = await paused_here(app, pilot, PUBLISH_FIRST)
            store = other.store
            claim = store.claim_batch(
                {approval_id: True},
                claim_id="clm_alice",
                claimed_by="alice@laptop pid 123",
                decided_by="alice",
                ttl_s=300,
            )
            await until_true(pilot, lambda: "alice@laptop pid 123" in status(app).detail)
            assert "approved by alice" in status(app).detail
            store.start_batch(claim)
            await until_true(pilot, lambda: "resuming in" in status(app).detail)
            assert "alice@laptop pid 123" in status(app).detail
            # Its process died after the guard: the store ends it, outcome unknown.
            store.finish_batch(claim, ResumeReport(ended=False, why="killed"), ttl_s=300)
            await until_true(pilot, lambda: status(app).state == "unfinished")
            assert "outcome unknown" in status(app).detail
            texts = log_texts(app)
            assert any("resuming in alice@laptop pid 123" in t for t in texts), texts
            assert any("outcome unknown" in t for t in texts), texts
            assert not app.main.running
    finally:
        other.close()
    assert not published(data_dir, "draft_01")


async def test_a_claim_given_back_before_its_resume_started_is_asked_here_again(
    data_dir: Path,
) -> None:
    """Another approver took the run and gave it back before anything ran (cancelled):
    the approval waits for a decision again, and this run's prompt asks it again."""
    app = make_app(data_dir)
    other = other_workspace(data_dir)
    try:
        async with app.run_test(size=SIZE) as pilot:
            approval_id = await paused_here(app, pilot, PUBLISH_FIRST)
            prompt = app.query_one(ApprovalPrompt)
            claim = other.store.claim_batch(
                {approval_id: True},
                claim_id="clm_back",
                claimed_by="alice@laptop pid 123",
                decided_by="alice",
                ttl_s=300,
            )
            await until_true(pilot, lambda: prompt.current is None)
            await until_true(pilot, lambda: "alice@laptop pid 123" in status(app).detail)
            other.store.finish_batch(claim, ResumeReport(ended=False, why="cancelled"), ttl_s=300)
            await until_true(pilot, lambda: prompt.current is not None)
            assert prompt.current is not None and prompt.current.id == approval_id
            assert "waiting for approval again" in status(app).detail
            assert app.focused is not prompt  # shown, never focused
    finally:
        other.close()
    assert app.ws.store.get_approval(approval_id).state() == "pending"


async def test_a_resume_elsewhere_whose_run_is_not_in_the_history_says_so(
    data_dir: Path,
) -> None:
    """The approvals ended (approved, the call ran) but the store has no record of the run
    that resumed: the IDE says how they ended and that the run cannot be read."""
    app = make_app(data_dir)
    other = other_workspace(data_dir)
    try:
        async with app.run_test(size=SIZE) as pilot:
            approval_id = await paused_here(app, pilot, PUBLISH_FIRST)
            claim = other.store.claim_batch(
                {approval_id: True},
                claim_id="clm_lost",
                claimed_by="alice@laptop pid 123",
                decided_by="alice",
                ttl_s=300,
            )
            other.store.start_batch(claim)
            report = ResumeReport(
                ended=True,
                run_id="run_never_kept",
                status="ok",
                calls={approval_id: CallFacts(decision="approved", ok=True)},
            )
            other.store.finish_batch(claim, report, ttl_s=300)
            await until_true(pilot, lambda: status(app).state == "approved")
            assert "run_never_kept is not in the history" in status(app).detail
            assert not app.main.running and app.query_one(ApprovalPrompt).current is None
    finally:
        other.close()


async def test_a_stuck_resume_elsewhere_is_shown_then_its_recovery(data_dir: Path) -> None:
    app = make_app(data_dir)
    other = other_workspace(data_dir)
    try:
        async with app.run_test(size=SIZE) as pilot:
            approval_id = await paused_here(app, pilot, PUBLISH_FIRST)
            # Declared idempotent, so a resume that passed its guard and whose lease ran
            # out waits for a takeover (stuck) rather than reading unfinished at once; and
            # named for another process to resume (gone now), so this IDE, which takes
            # over only the runs that name it, leaves it stuck.
            db = sqlite3.connect(other.store.path)  # type: ignore[attr-defined]
            with db:
                db.execute(
                    "UPDATE approvals SET idempotent = 1, resume_by = 'exe_gone' WHERE id = ?",
                    (approval_id,),
                )
            db.close()
            claim = other.store.claim_batch(
                {approval_id: True},
                claim_id="clm_dead",
                claimed_by="bob@desk pid 9",
                decided_by="bob",
                ttl_s=-1,
            )
            other.store.start_batch(claim)
            await until_true(pilot, lambda: status(app).state == "stuck")
            assert "bob@desk pid 9" in status(app).detail
            assert "F6" in status(app).detail  # where it is recovered
            recover(other.store, approval_id, approver="bob")
            await until_true(pilot, lambda: status(app).state == "unfinished")
            assert "outcome unknown" in status(app).detail
    finally:
        other.close()


async def test_a_lapsed_idempotent_resume_elsewhere_is_taken_over_here(data_dir: Path) -> None:
    # This IDE is the executor of the runs it starts: another process's resume of its
    # run died after its guard, and the call may run again (idempotent): the IDE takes
    # it over and shows the run's end.
    app = make_app(data_dir)
    other = other_workspace(data_dir)
    try:
        async with app.run_test(size=SIZE) as pilot:
            approval_id = await paused_here(app, pilot, PUBLISH_FIRST)
            assert app.ws.executor_id is not None
            assert other.store.get_approval(approval_id).resume_by == app.ws.executor_id
            db = sqlite3.connect(other.store.path)  # type: ignore[attr-defined]
            with db:
                db.execute("UPDATE approvals SET idempotent = 1 WHERE id = ?", (approval_id,))
            db.close()
            claim = other.store.claim_batch(
                {approval_id: True},
                claim_id="clm_dead",
                claimed_by="bob@desk pid 9",
                decided_by="bob",
                ttl_s=-1,
            )
            other.store.start_batch(claim)
            await until_true(pilot, lambda: status(app).state == "ok")
            ended = other.store.get_approval(approval_id)
            assert ended is not None and ended.status == "approved"
            assert ended.claimed_by != "bob@desk pid 9"  # taken over, here
            assert ended.decided_by == "bob"  # the decision is bob's still
    finally:
        other.close()
    assert published(data_dir, "draft_01")


async def test_a_denial_elsewhere_shows_what_the_snippet_was_told(data_dir: Path) -> None:
    app = make_app(data_dir)
    other = other_workspace(data_dir)
    try:
        async with app.run_test(size=SIZE) as pilot:
            approval_id = await paused_here(app, pilot, PUBLISH_FIRST)
            await other.decide({approval_id: False}, approver="bob")
            await until_true(pilot, lambda: status(app).state == "error")
            await settle(pilot)
            assert app.main.runs.result is not None
            assert app.main.runs.result.error is not None
            assert app.main.runs.result.error.code == "RUN_APPROVAL_DENIED"
            assert app.query_one(RunErrorView).display
            assert any("denied by bob" in t for t in log_texts(app))
    finally:
        other.close()
    assert not published(data_dir, "draft_01")


# ---------------------------------------------------------------- a second question
async def test_a_resume_elsewhere_that_pauses_again_asks_here(
    data_dir: Path, no_arm_delay: None
) -> None:
    """The resumed run waits for a second approval: the IDE's prompt asks it, as a fresh
    run's would, and answering it here resumes the run here."""
    app = make_app(data_dir)
    other = other_workspace(data_dir)
    try:
        async with app.run_test(size=SIZE) as pilot:
            first = await paused_here(app, pilot, TWO_PUBLISHES)
            await other.decide({first: True}, approver="alice")
            prompt = app.query_one(ApprovalPrompt)
            await until_true(
                pilot, lambda: prompt.current is not None and prompt.current.id != first
            )
            second = prompt.current
            assert second is not None and second.path == "documents.publish"
            assert second.args == ["draft_02"]
            assert status(app).state == "interrupted"
            assert "first one done" in log_texts(app)
            assert published(data_dir, "draft_01") and not published(data_dir, "draft_02")
            # Its question was listed before its run arrived: never announced as another's.
            assert not [n for n in app._notifications if "another run" in n.message]
            await pilot.press("f3", "y")
            await settle(pilot)
            assert status(app).state == "ok"
            assert app.main.runs.result is not None and app.main.runs.result.value["published"]
    finally:
        other.close()
    assert published(data_dir, "draft_02")
    assert app.ws.store.get_approval(second.id).decided_by != "alice"


async def test_a_second_question_decided_elsewhere_too_is_followed_to_its_end(
    data_dir: Path,
) -> None:
    """Both questions answered in other processes: the IDE asks the second, drops it
    when it is decided, and shows the run that ended, with both publishes and its value."""
    app = make_app(data_dir)
    other = other_workspace(data_dir)
    try:
        async with app.run_test(size=SIZE) as pilot:
            first = await paused_here(app, pilot, TWO_PUBLISHES)
            await other.decide({first: True}, approver="alice")
            prompt = app.query_one(ApprovalPrompt)
            await until_true(
                pilot, lambda: prompt.current is not None and prompt.current.id != first
            )
            assert prompt.current is not None
            await other.decide({prompt.current.id: True}, approver="bob")
            await until_true(pilot, lambda: status(app).state == "ok")
            await settle(pilot)
            assert prompt.current is None
            assert "approved by bob" in status(app).detail
            result = app.main.runs.result
            assert result is not None and result.value["published"] is True
            publishes = [c for c in app.main.calls.calls.values() if c.path == "documents.publish"]
            assert [c.ok for c in publishes] == [True, True]
            assert "first one done" in log_texts(app)
    finally:
        other.close()
    assert published(data_dir, "draft_02")


async def test_while_this_run_asks_another_runs_approval_is_announced_at_once(
    data_dir: Path,
) -> None:
    """Following the paused run on screen holds back no news: an approval of another
    run, made while this run's prompt asks, is announced as it comes."""
    app = make_app(data_dir)
    other = other_workspace(data_dir)
    try:
        async with app.run_test(size=SIZE) as pilot:
            await paused_here(app, pilot, PUBLISH_FIRST)
            assert app.main.followed is not None
            await other.run("return await documents.publish('draft_02')")

            def announced() -> bool:
                return any("another run" in n.message for n in app._notifications)

            await until_true(pilot, announced)
            assert app.query_one(ApprovalPrompt).current is not None
    finally:
        other.close()


async def test_typing_while_the_result_arrives_decides_nothing(data_dir: Path) -> None:
    """Keys typed while the resumed run arrives, and while its second question appears,
    go where they were going (the editor): none approves or denies anything."""
    app = make_app(data_dir)
    other = other_workspace(data_dir)
    try:
        async with app.run_test(size=SIZE) as pilot:
            first = await paused_here(app, pilot, TWO_PUBLISHES)
            editor = app.main.editor_tabs.active_editor
            assert editor is not None
            editor.focus()
            editor.load_text("")
            await other.decide({first: True}, approver="alice")
            prompt = app.query_one(ApprovalPrompt)
            typed = 0
            while not (prompt.current is not None and prompt.current.id != first):
                await pilot.press("y", "enter", "a", "n", "space")
                typed += 1
                assert typed < 500, "the second question never came"
            for _ in range(5):
                await pilot.press("y", "enter", "a", "n", "space")
            await settle(pilot)
            second = prompt.current
            assert second is not None
            stored = app.ws.store.get_approval(second.id)
            assert stored is not None and stored.state() == "pending"
            assert stored.decision is None
            assert editor.text.count("y") == typed + 5  # every key reached the editor
            assert app.focused is editor
    finally:
        other.close()
    assert not published(data_dir, "draft_02")


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


DECIDED: dict[str, Any] = {"decision": "approve", "decided_by": "alice"}
HELD: dict[str, Any] = {"claimed_by": "alice@laptop pid 123", "claim_id": "clm_1"}


def test_each_state_of_a_run_decided_elsewhere_reads_as_words() -> None:
    now = 1_000.0
    live = {"claim_expires_at": now + 60}
    cases = [
        (approval(), "deciding", "waiting for a decision"),
        (approval(**DECIDED), "waiting", "approved by alice — waiting for its run to resume"),
        (
            approval(**DECIDED, **HELD, **live, status="claimed"),
            "waiting",
            "approved by alice — about to resume in alice@laptop pid 123",
        ),
        (
            approval(**DECIDED, **HELD, **live, status="executing", executing_at=now),
            "waiting",
            "approved by alice — resuming in alice@laptop pid 123 since",
        ),
        (
            approval(**DECIDED, **HELD, status="executing", executing_at=now, claim_expires_at=now),
            "stuck",
            "approved by alice — STUCK: its resume in alice@laptop pid 123 started",
        ),
        (
            approval(**DECIDED, **HELD, status="unfinished", outcome="unknown", note="killed"),
            "unfinished",
            "approved by alice — unfinished in alice@laptop pid 123, outcome unknown (killed)",
        ),
        (
            approval(decision="deny", decided_by="bob", decided_via="claude", status="failed"),
            "failed",
            "denied by bob via claude — failed",
        ),
    ]
    for row, state, words in cases:
        progress = run_progress([row], now)
        assert progress.state == state, (row, progress)
        assert progress.words.startswith(words), (words, progress.words)
        assert not progress.ended if state in ("deciding", "waiting", "stuck") else progress.ended


def test_a_batch_resumed_elsewhere_names_its_run_and_where() -> None:
    both = [
        approval(**DECIDED, **HELD, status="approved", resumed_run_id="run_2"),
        approval(
            id="int_2",
            decision="deny",
            decided_by="alice",
            **HELD,
            status="denied",
            resumed_run_id="run_2",
        ),
    ]
    progress = run_progress(both)
    assert progress.state == "resumed" and progress.ended
    assert progress.resumed_run_id == "run_2" and progress.ended_as == "denied"
    assert progress.resumed_in == (
        "approved by alice, denied by alice, resumed in alice@laptop pid 123"
    )
    # One still open keeps the batch waiting, whatever the other says.
    waiting = run_progress([both[0], approval(id="int_2", **DECIDED)])
    assert waiting.state == "waiting" and waiting.resumed_run_id is None
    # Approved but with no run kept: ended, nothing to read.
    assert run_progress([approval(**DECIDED, status="approved")]).state == "approved"


# ---------------------------------------------------------------- the watcher (no app)
async def test_following_a_run_wakes_the_watcher_which_goes_on_watching(data_dir: Path) -> None:
    """`follow` cuts the watcher's wait short to read the run's approvals now; the wait
    it cut is over before the watcher goes on, and later changes are still heard."""
    ws = open_workspace(None, data_dir_override=str(data_dir))
    other = other_workspace(data_dir)
    posted: list[ApprovalsChanged] = []
    heard = asyncio.Event()

    class Owner:
        def post_message(self, message: ApprovalsChanged) -> bool:
            posted.append(message)
            heard.set()
            return True

    async def next_list() -> ApprovalsChanged:
        heard.clear()
        await asyncio.wait_for(heard.wait(), timeout=60)  # bounds a hang, never a pace
        return posted[-1]

    inbox = ApprovalsInbox(cast(Any, Owner()), ws)
    watcher = asyncio.create_task(inbox._watch())
    try:
        assert (await next_list()).followed is None
        approval_id = (await other.run(PUBLISH_FIRST)).interruptions[0].id
        assert [a.id for a in (await next_list()).approvals or []] == [approval_id]
        for _ in range(3):  # each follow wakes a watcher that is waiting on the store
            inbox.follow({approval_id})
            got = await next_list()
            assert got.problem is None, got.problem
            assert [a.state() for a in got.followed or []] == ["pending"]
        await other.decide({approval_id: False}, approver="bob")
        while not any(a.status == "denied" for a in posted[-1].followed or []):
            await next_list()
        assert all(m.problem is None for m in posted)
        assert not watcher.done()
    finally:
        watcher.cancel()
        await asyncio.gather(watcher, return_exceptions=True)
        other.close()
        ws.close()
