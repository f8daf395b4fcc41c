"""The demo host: a seeded SQLite database behind crm, store, billing, documents, orders."""

from __future__ import annotations

import inspect
import json
import os
import sqlite3
import subprocess
import sys
import textwrap
import threading
from pathlib import Path
from typing import Any

import forked_cli
import pytest

from run_repl import create_runner
from run_repl.host import demo
from run_repl.host.demo import (
    DEMO_DB,
    DEMO_EXAMPLES,
    LATENCY_S,
    make_demo_host,
    open_demo_db,
    reset_demo,
)
from run_repl.host.loader import HostLoadError
from run_repl.sandbox.session.host_functions import build_manifest

SECRET = "d" * 40


@pytest.fixture
def runner() -> Any:
    return create_runner(secret=SECRET)


@pytest.fixture
def host(tmp_path: Path) -> dict[str, Any]:
    return make_demo_host(tmp_path)


def query(data_dir: Path, sql: str, *args: Any) -> list[tuple[Any, ...]]:
    conn = sqlite3.connect(data_dir / DEMO_DB)
    try:
        return conn.execute(sql, args).fetchall()
    finally:
        conn.close()


def example(title: str) -> str:
    return dict(DEMO_EXAMPLES)[title]


async def ok(runner: Any, source: str, host: dict[str, Any]) -> Any:
    result = await runner.run(source, host)
    assert result.status == "ok", result.error
    return result.value


# ------------------------------------------------------------------ the database


def test_seed_counts_ids_and_overdue_invoices(tmp_path: Path) -> None:
    path = open_demo_db(tmp_path)
    assert path == tmp_path / DEMO_DB
    counts = {
        t: query(tmp_path, f"SELECT count(*) FROM {t}")[0][0]
        for t in ("accounts", "orders", "invoices", "drafts")
    }
    assert counts == {"accounts": 50, "orders": 5000, "invoices": 1000, "drafts": 6}
    assert query(tmp_path, "SELECT min(id), max(id) FROM accounts") == [("acc_0001", "acc_0050")]
    assert query(tmp_path, "SELECT min(id), max(id) FROM orders") == [("ord_00001", "ord_05000")]
    assert query(tmp_path, "SELECT min(id), max(id) FROM invoices") == [("inv_0001", "inv_1000")]
    per_account = [n for (n,) in query(tmp_path, "SELECT count(*) FROM orders GROUP BY account_id")]
    assert len(per_account) == 50 and min(per_account) > 50 and max(per_account) < 160
    statuses = dict(query(tmp_path, "SELECT status, count(*) FROM orders GROUP BY status"))
    assert set(statuses) == {"paid", "refunded", "pending"}
    overdue_accounts = query(
        tmp_path, "SELECT DISTINCT account_id FROM invoices WHERE status = 'overdue'"
    )
    assert len(overdue_accounts) >= 10
    assert ("acc_0003",) in overdue_accounts  # the concurrent example's account
    assert query(tmp_path, "SELECT id FROM drafts WHERE published = 1") == [("draft_06",)]


def test_two_fresh_databases_are_identical(tmp_path: Path) -> None:
    dumps = []
    for name in ("a", "b"):
        conn = sqlite3.connect(open_demo_db(tmp_path / name))
        dumps.append(list(conn.iterdump()))
        conn.close()
    assert dumps[0] == dumps[1]
    assert len(dumps[0]) > 6000


def test_open_again_keeps_the_file_and_reset_undoes_changes(tmp_path: Path) -> None:
    path = open_demo_db(tmp_path)
    inode = path.stat().st_ino
    assert open_demo_db(tmp_path) == path
    assert path.stat().st_ino == inode  # opened as it was, not built again
    assert sorted(p.name for p in tmp_path.iterdir()) == [DEMO_DB]  # no temp files left
    conn = sqlite3.connect(path)
    with conn:
        conn.execute("UPDATE orders SET status = 'refunded' WHERE id = 'ord_00001'")
    conn.close()
    assert reset_demo(tmp_path) == path
    assert query(tmp_path, "SELECT status FROM orders WHERE id = 'ord_00001'") != [("refunded",)]


def refund_in_file(path: Path, order_id: str) -> None:
    conn = sqlite3.connect(path)
    with conn:
        conn.execute("UPDATE orders SET status = 'refunded' WHERE id = ?", (order_id,))
    conn.close()


def test_a_locked_database_is_waited_for_and_never_replaced(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # redteam M6: a lock held past the wait rebuilt the file and undid an approved refund.
    path = open_demo_db(tmp_path)
    refund_in_file(path, "ord_00017")
    inode = path.stat().st_ino
    monkeypatch.setattr(demo, "BUSY_TIMEOUT_S", 0.2)
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")
    try:
        with pytest.raises(demo.DemoDatabaseBusy, match=r"locked by another program.*not changed"):
            open_demo_db(tmp_path)
        with pytest.raises(HostLoadError):  # what the front ends catch: one clear line
            make_demo_host(tmp_path)
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert path.stat().st_ino == inode
    assert query(tmp_path, "SELECT status FROM orders WHERE id = 'ord_00017'") == [("refunded",)]
    assert sorted(p.name for p in tmp_path.iterdir()) == [DEMO_DB]


def test_a_lock_released_during_the_wait_opens_the_same_file(tmp_path: Path) -> None:
    path = open_demo_db(tmp_path)
    refund_in_file(path, "ord_00017")
    holder = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    holder.execute("BEGIN EXCLUSIVE")
    release = threading.Timer(0.3, lambda: holder.execute("ROLLBACK"))
    release.start()
    try:
        assert open_demo_db(tmp_path) == path
    finally:
        release.join()
        holder.close()
    assert query(tmp_path, "SELECT status FROM orders WHERE id = 'ord_00017'") == [("refunded",)]


@pytest.mark.slow
@pytest.mark.parametrize(
    ("damage", "kept_as"),
    [
        (lambda p: p.write_bytes(b"not a database" * 100), "damaged"),
        (lambda p: p.write_bytes(p.read_bytes()[:100]), "damaged"),
        (
            lambda p: sqlite3.connect(p).execute("PRAGMA user_version = 7").connection.commit(),
            "version-7",
        ),
    ],
    ids=["garbage", "truncated", "other-version"],
)
def test_a_bad_file_is_kept_aside_with_a_warning_before_a_fresh_one(
    tmp_path: Path, damage: Any, kept_as: str
) -> None:
    path = open_demo_db(tmp_path)
    refund_in_file(path, "ord_00017")
    damage(path)
    bad = path.read_bytes()
    told: list[str] = []
    assert open_demo_db(tmp_path, warn=told.append) == path
    kept = [p for p in tmp_path.iterdir() if p.name != DEMO_DB]
    assert len(kept) == 1 and kept[0].name.startswith(f"{DEMO_DB}.{kept_as}-")
    assert kept[0].read_bytes() == bad  # the person's data is still there to rescue
    assert len(told) == 1 and kept[0].name in told[0] and "fresh" in told[0]
    assert query(tmp_path, "SELECT count(*) FROM orders") == [(5000,)]


def test_without_a_listener_the_warning_is_a_python_warning(tmp_path: Path) -> None:
    (tmp_path / DEMO_DB).write_bytes(b"garbage" * 1000)
    with pytest.warns(demo.DemoDataWarning, match="kept as demo.sqlite3.damaged-"):
        make_demo_host(tmp_path)


CONCURRENT_OPEN = """
import json, sys, time
from pathlib import Path
from run_repl.host.demo import open_demo_db
data_dir, me, other = Path(sys.argv[1]), sys.argv[2], sys.argv[3]
(data_dir / me).touch()
deadline = time.time() + 20
while not (data_dir / other).exists() and time.time() < deadline:  # start together
    time.sleep(0.001)
import sqlite3
conn = sqlite3.connect(open_demo_db(data_dir / "shared"))
counts = [conn.execute(f"SELECT count(*) FROM {t}").fetchone()[0] for t in ("accounts", "orders", "invoices", "drafts")]
print(json.dumps(counts))
"""


def test_two_processes_opening_it_first_both_get_a_whole_database(tmp_path: Path) -> None:
    procs = [
        subprocess.Popen(
            forked_cli.python_c(CONCURRENT_OPEN, str(tmp_path), me, other),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for me, other in (("ready-a", "ready-b"), ("ready-b", "ready-a"))
    ]
    outs = [p.communicate(timeout=60) for p in procs]
    for proc, (out, err) in zip(procs, outs, strict=True):
        assert proc.returncode == 0, err
        assert json.loads(out) == [50, 5000, 1000, 6]
    assert sorted(p.name for p in (tmp_path / "shared").iterdir()) == [DEMO_DB]


# ------------------------------------------------------------------ the functions, through the engine


def test_functions_have_signatures_docs_and_the_right_kinds(host: dict[str, Any]) -> None:
    manifest = build_manifest(host)
    assert sorted(manifest.paths) == [
        "billing.listInvoices",
        "crm.getAccount",
        "crm.listAccounts",
        "documents.listDrafts",
        "documents.publish",
        "orders.refund",
        "store.listOrders",
    ]
    for path, fn in manifest.functions.items():
        assert fn.doc, path
        params = inspect.signature(fn.fn).parameters.values()
        assert all(p.annotation is not inspect.Parameter.empty for p in params), path
    assert str(inspect.signature(host["store"]["listOrders"])).startswith(
        "(customerId: str, status: str | None = None)"
    )
    assert manifest.functions["billing.listInvoices"].is_async
    assert {p for p, f in manifest.functions.items() if f.approval is not None} == {
        "documents.publish",
        "orders.refund",
    }


async def test_read_functions_return_plain_data_with_dates(
    runner: Any, host: dict[str, Any]
) -> None:
    value = await ok(
        runner,
        """
const all = await crm.listAccounts();
const three = await crm.listAccounts(3);
const account = await crm.getAccount("acc_0007");
const list = await store.listOrders("acc_0007");
const pending = await store.listOrders("acc_0007", "pending");
const invoices = await billing.listInvoices("acc_0007");
const drafts = await documents.listDrafts();
const times = list.map((o: any) => o.created_at.getTime());
return {
  all: all.length, three: three.map((a: any) => a.id), account,
  orders: list.length, newestFirst: times.every((t: number, i: number) => i === 0 || times[i - 1] >= t),
  onlyPending: pending.every((o: any) => o.status === "pending"),
  order: list[0], invoices: invoices.length,
  dates: [account.created_at, list[0].created_at, invoices[0].issued_at, invoices[0].due_date,
          drafts[0].updated_at].every((d: unknown) => d instanceof Date),
  drafts: drafts.map((d: any) => [d.id, d.published, d.published_at instanceof Date]),
};
""",
        host,
    )
    assert value["all"] == 50 and value["three"] == ["acc_0001", "acc_0002", "acc_0003"]
    assert set(value["account"]) == {"id", "name", "email", "plan", "created_at"}
    assert value["account"]["id"] == "acc_0007" and value["account"]["created_at"].endswith("Z")
    assert 50 < value["orders"] < 160 and value["newestFirst"] and value["onlyPending"]
    order = value["order"]
    assert set(order) == {"id", "account_id", "amount", "currency", "status", "items", "created_at"}
    assert order["account_id"] == "acc_0007" and isinstance(order["amount"], int | float)
    assert round(order["amount"] * 100) == order["amount"] * 100  # dollars and cents
    assert value["invoices"] > 5 and value["dates"] is True
    assert value["drafts"][0] == ["draft_01", False, False]
    assert value["drafts"][-1] == ["draft_06", True, True]


async def test_errors_reach_the_snippet_with_message_and_code(
    runner: Any, host: dict[str, Any], tmp_path: Path
) -> None:
    [(pending_order,)] = query(tmp_path, "SELECT id FROM orders WHERE status = 'pending' LIMIT 1")
    [(refunded_order,)] = query(tmp_path, "SELECT id FROM orders WHERE status = 'refunded' LIMIT 1")
    source = f"""
const attempt = async (f: () => Promise<unknown>) => {{
  try {{ await f(); return "no error" }} catch (e: any) {{ return [e.hostCode, e.message] }}
}};
return {{
  account: await attempt(() => crm.getAccount("account_123")),
  number: await attempt(() => crm.getAccount(42)),
  limit: await attempt(() => crm.listAccounts(-1)),
  customer: await attempt(() => store.listOrders("customer_123")),
  status: await attempt(() => store.listOrders("acc_0001", "lost")),
  invoices: await attempt(() => billing.listInvoices("acc_9999")),
  draft: await attempt(() => documents.publish("draft_99")),
  published: await attempt(() => documents.publish("draft_06")),
  order: await attempt(() => orders.refund("ord_99999")),
  refunded: await attempt(() => orders.refund("{refunded_order}")),
  pending: await attempt(() => orders.refund("{pending_order}")),
}};
"""
    result = await runner.run(source, host)
    # Impossible publishes and refunds fail at once: nobody is asked to approve them.
    assert result.status == "ok", result.error
    v = result.value
    assert v["account"] == [
        "NOT_FOUND",
        "No account 'account_123'. Ids look like 'acc_0001'; crm.listAccounts() lists them.",
    ]
    assert v["number"][0] == "INVALID_ARGUMENT" and "the number 42" in v["number"][1]
    assert v["limit"][0] == "INVALID_ARGUMENT"
    assert v["customer"][0] == "NOT_FOUND" and "customer_123" in v["customer"][1]
    assert v["status"][0] == "INVALID_ARGUMENT" and "paid, refunded, pending" in v["status"][1]
    assert v["invoices"][0] == "NOT_FOUND"
    assert v["draft"][0] == "NOT_FOUND" and "documents.listDrafts()" in v["draft"][1]
    assert v["published"][0] == "ALREADY_PUBLISHED" and "draft_06" in v["published"][1]
    assert v["order"][0] == "NOT_FOUND"
    assert v["refunded"] == ["ALREADY_REFUNDED", f"Order {refunded_order} is already refunded."]
    assert v["pending"][0] == "NOT_REFUNDABLE"
    assert all(c.decision is None for c in result.calls)


async def test_the_concurrent_example_takes_one_wait_not_two(
    runner: Any, host: dict[str, Any]
) -> None:
    result = await runner.run(example("Account and overdue invoices, concurrently"), host)
    assert result.status == "ok", result.error
    assert result.value["account"] and result.value["overdue"]
    assert {i["status"] for i in result.value["overdue"]} == {"overdue"}
    account, invoices = result.calls
    assert (account.path, invoices.path) == ("crm.getAccount", "billing.listInvoices")
    wait_ms = LATENCY_S * 1000
    for call in (account, invoices):
        assert call.duration_ms is not None and call.duration_ms >= wait_ms * 0.9
    # Both were running at the same time (structural: no wall-clock bound on a busy machine).
    assert invoices.started_at_ms < account.started_at_ms + account.duration_ms
    assert account.started_at_ms < invoices.started_at_ms + invoices.duration_ms


@pytest.mark.slow
async def test_every_example_runs(runner: Any, host: dict[str, Any]) -> None:
    assert len(DEMO_EXAMPLES) >= 6
    assert [t for t, _ in DEMO_EXAMPLES[:4]] == [
        "Orders of the first customer",
        "Account and overdue invoices, concurrently",
        "Publish a draft (asks for approval)",
        "Refund an order (asks for approval)",
    ]
    for title, source in DEMO_EXAMPLES:
        result = await runner.run(source, host)
        if "approval" in title:
            assert result.status == "interrupted", (title, result.error)
            [interruption] = result.interruptions
            payload = interruption.payload
            assert payload["kind"] == "approval", title
            assert payload["args"][0] in payload["message"], title
        else:
            assert result.status == "ok", (title, result.error)
            assert result.value is not None or result.value_window is not None, title
    interrupted = await runner.run(example("Publish a draft (asks for approval)"), host)
    assert interrupted.interruptions[0].payload["message"] == (
        'Publish draft draft_01 ("Spring pricing update")?'
    )


async def resume(runner: Any, source: str, host: dict[str, Any], first: Any, value: Any) -> Any:
    return await runner.run(
        source,
        host,
        continuation=first.continuation,
        resolutions=[{"interruption_id": first.interruptions[0].id, "value": value}],
    )


async def test_an_approved_refund_changes_the_database_and_a_denied_one_does_not(
    runner: Any, host: dict[str, Any]
) -> None:
    source = example("Refund an order (asks for approval)")
    first = await runner.run(source, host)
    order_id = first.interruptions[0].args[0]
    message = first.interruptions[0].payload["message"]
    assert order_id in message and "acc_0002" in message and "$" in message
    denied = await resume(runner, source, host, first, False)
    assert denied.status == "error" and denied.error.code == "RUN_APPROVAL_DENIED"
    read = f"return (await store.listOrders('acc_0002')).find((o: any) => o.id === '{order_id}')"
    assert (await ok(runner, read, host))["status"] == "paid"

    first = await runner.run(source, host)
    approved = await resume(runner, source, host, first, True)
    assert approved.status == "ok", approved.error
    assert approved.value["id"] == order_id and approved.value["status"] == "refunded"
    assert (await ok(runner, read, host))["status"] == "refunded"
    # The example now picks the next paid order.
    again = await runner.run(source, host)
    assert again.interruptions[0].args[0] != order_id


async def test_publishing_twice_fails_with_already_published(
    runner: Any, host: dict[str, Any]
) -> None:
    source = "return await documents.publish('draft_02')"
    # Two approvals asked for the same draft before either was given.
    one, two = await runner.run(source, host), await runner.run(source, host)
    assert 'Publish draft draft_02 ("' in one.interruptions[0].payload["message"]
    published = await resume(runner, source, host, one, True)
    assert published.status == "ok", published.error
    assert published.value["published"] is True and published.value["published_at"]
    late = await resume(runner, source, host, two, True)
    assert late.status == "error" and "already published" in late.error.message
    caught = await ok(
        runner,
        "try { await documents.publish('draft_02') } catch (e: any) { return e.hostCode }",
        host,
    )
    assert caught == "ALREADY_PUBLISHED"
    drafts = await ok(runner, "return await documents.listDrafts()", host)
    assert [d["id"] for d in drafts if d["published"]] == ["draft_02", "draft_06"]


def test_a_database_deleted_while_running_is_made_again(
    tmp_path: Path, host: dict[str, Any]
) -> None:
    (tmp_path / DEMO_DB).unlink()
    assert len(host["crm"]["listAccounts"]()) == 50


def test_the_module_imports_no_front_end() -> None:
    code = textwrap.dedent(
        """
        import sys, run_repl.host.demo
        print(sorted(m for m in sys.modules if m.split('.')[0] in ('textual', 'prompt_toolkit')))
        """
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, env=os.environ
    )
    assert out.stdout.strip() == "[]"
