"""Durable before named: a `value_ref` (or `logs_ref`) a run's result names is in the
store when the run returns, so another server on the same database reads it at once,
and a process killed right after it replied loses nothing it named."""

from __future__ import annotations

import os
import signal
import subprocess
from pathlib import Path

import forked_cli
from store_kinds import CHILD_PRELUDE, open_spec

from run_repl import create_runner
from run_repl.sandbox.wire.result_store import StoredItems, page_of

# Big enough that writing it takes a while: a write left to a thread after the run
# returned is not done when the reader looks.
BIG = "Array.from({ length: 100000 }, (_, i) => ({ i, t: 'item' }))"
LOGS = "for (let i = 0; i < 400; i++) console.log('line ' + i); return 7"


async def test_a_named_value_is_readable_through_another_store_at_once(
    durable_spec: str,
) -> None:
    writer, reader = open_spec(durable_spec), open_spec(durable_spec)
    try:
        runner = create_runner(store=writer)
        result = await runner.run(BIG)
        assert result.status == "ok" and result.value_ref
        # No flush: what the result names is there already, for any other store object.
        page = page_of(reader, result.value_ref, 99_998, 5)
        assert [x["i"] for x in page.items] == [99_998, 99_999] and page.total == 100_000
    finally:
        writer.close()
        reader.close()


async def test_named_logs_are_readable_through_another_store_at_once(durable_spec: str) -> None:
    writer, reader = open_spec(durable_spec), open_spec(durable_spec)
    try:
        runner = create_runner(store=writer)
        result = await runner.run(LOGS)
        assert result.value == 7 and result.logs_ref and result.value_ref
        assert page_of(reader, result.logs_ref, 399, 1).items[0]["text"] == "line 399"
        assert page_of(reader, result.value_ref, 0, 1).items == [7]
    finally:
        writer.close()
        reader.close()


async def test_a_run_that_names_no_ref_writes_nothing(durable_spec: str) -> None:
    store = open_spec(durable_spec)
    try:
        runner = create_runner(store=store)
        for source in ("undefined", "throw new Error('no')", "return (1"):
            result = await runner.run(source)
            assert result.value_ref is None and result.logs_ref is None
        assert runner._writes == []  # nothing queued behind either
    finally:
        store.close()


CHILD = (
    CHILD_PRELUDE.format(here=str(Path(__file__).parent))
    + """
import asyncio, time
from run_repl import create_runner
store = open_spec(sys.argv[1])
runner = create_runner(store=store)
result = asyncio.run(runner.run(sys.argv[2]))
# The reply: the ref it names, then nothing more (the test kills this process now).
print(result.value_ref, flush=True)
time.sleep(120)
"""
)


def test_a_writer_killed_right_after_its_reply_leaves_the_value(durable_spec: str) -> None:
    open_spec(durable_spec).close()  # the tables, before the child races to make them
    child = subprocess.Popen(
        forked_cli.python_c(CHILD, durable_spec, BIG),
        stdout=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        assert child.stdout is not None
        ref = child.stdout.readline().strip()
        os.killpg(child.pid, signal.SIGKILL)
        child.wait(timeout=30)
    finally:
        if child.poll() is None:
            os.killpg(child.pid, signal.SIGKILL)
            child.wait(timeout=30)
    assert ref.startswith("res_")
    reader = open_spec(durable_spec)
    try:
        page = page_of(reader, ref, 0, 2)
        assert [x["i"] for x in page.items] == [0, 1] and page.total == 100_000
    finally:
        reader.close()


async def test_a_failed_write_loses_no_result_and_is_tried_again(tmp_path: Path) -> None:
    from run_repl.store import SqliteStore, StoreError

    class FullOnce(SqliteStore):
        failures = 1

        def put_items(self, stored: StoredItems) -> None:
            if self.failures:
                self.failures -= 1
                raise StoreError("disk full")
            super().put_items(stored)

    store = FullOnce(str(tmp_path / "s.sqlite3"))
    try:
        runner = create_runner(store=store)
        result = await runner.run("[1, 2, 3]")
        assert result.status == "ok" and result.value == [1, 2, 3] and result.value_ref
        assert runner.expand(result.value_ref).items == [1, 2, 3]  # this runner still pages it
        runner.flush(timeout=30)  # the write tried again behind
        assert page_of(store, result.value_ref, 0, 3).items == [1, 2, 3]
    finally:
        store.close()
