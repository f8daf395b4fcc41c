"""The demo host: customers, orders, invoices and drafts in a real SQLite file.

With no `--host`, the front ends run snippets against these functions, so a
fresh install does its main job at once (the README's first examples):

    host = make_demo_host(data_dir)      # creates and seeds demo.sqlite3 on first use
    await run("return await store.listOrders('acc_0001')", host)

The data is the same on every machine (a fixed random seed and a fixed "today",
`AS_OF`). `documents.publish` and `orders.refund` ask a person first and,
once approved, really change the database; `reset_demo` puts it back.
"""

import asyncio
import os
import random
import sqlite3
import tempfile
import time
import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, TypedDict

from run_repl import UNDEFINED, HostError, requires_approval
from run_repl.host.loader import HostLoadError
from run_repl.sqlite_files import is_busy, is_damaged, move_aside, transaction

# No `from __future__ import annotations` here: the front ends show these
# functions' signatures, and evaluated annotations read `str`, not `'str'`.

DEMO_DB = "demo.sqlite3"
SCHEMA_VERSION = 1  # PRAGMA user_version; a file with another version is kept aside, then rebuilt
BUSY_TIMEOUT_S = 10
SEED = 3003
AS_OF = datetime(2025, 6, 30, 12, 0, tzinfo=UTC)  # the data's "now": statuses agree with it
LATENCY_S = 0.025  # pretend-remote calls (crm.getAccount, billing.listInvoices) wait this long

N_ACCOUNTS = 50
N_ORDERS = 5_000
N_INVOICES = 1_000
ORDER_STATUSES = ("paid", "refunded", "pending")
INVOICE_STATUSES = ("paid", "open", "overdue")


class Account(TypedDict):
    id: str
    name: str
    email: str
    plan: str
    created_at: datetime


class Order(TypedDict):
    id: str
    account_id: str
    amount: float
    currency: str
    status: str
    items: int
    created_at: datetime


class Invoice(TypedDict):
    id: str
    account_id: str
    amount: float
    status: str
    issued_at: datetime
    due_date: datetime


class Draft(TypedDict):
    id: str
    title: str
    body: str
    author: str
    updated_at: datetime
    published: bool
    published_at: datetime | None


SCHEMA = """
CREATE TABLE accounts (
    id TEXT PRIMARY KEY,
    name TEXT NOT NULL,
    email TEXT NOT NULL,
    plan TEXT NOT NULL,
    created_at TEXT NOT NULL
);
CREATE TABLE orders (
    id TEXT PRIMARY KEY,
    account_id TEXT NOT NULL REFERENCES accounts(id),
    amount_cents INTEGER NOT NULL,
    currency TEXT NOT NULL,
    status TEXT NOT NULL CHECK (status IN ('paid', 'refunded', 'pending')),
    items INTEGER NOT NULL,
    created_at TEXT NOT NULL
);
CREATE INDEX orders_by_account ON orders (account_id, created_at);
CREATE TABLE invoices (
    id TEXT PRIMARY KEY,
    account_id TEXT NOT NULL REFERENCES accounts(id),
    amount_cents INTEGER NOT NULL,
    status TEXT NOT NULL CHECK (status IN ('paid', 'open', 'overdue')),
    issued_at TEXT NOT NULL,
    due_date TEXT NOT NULL
);
CREATE INDEX invoices_by_account ON invoices (account_id, issued_at);
CREATE TABLE drafts (
    id TEXT PRIMARY KEY,
    title TEXT NOT NULL,
    body TEXT NOT NULL,
    author TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    published INTEGER NOT NULL,
    published_at TEXT
);
"""

# ------------------------------------------------------------------ seed data

_FIRST = (
    "Acme Blue Cedar Copper Delta Ember Falcon Granite Harbor Indigo Juniper Kestrel Lumen "
    "Maple Nimbus Onyx Pioneer Quartz Redwood Summit Tidal Umber Vertex Willow Zephyr"
).split()
_SECOND = (
    "Analytics Bakery Robotics Logistics Studios Foods Health Labs Outfitters Energy Media "
    "Systems Supply Travel Networks"
).split()
_SUFFIX = ("Inc.", "LLC", "Co.", "Ltd.", "GmbH")
_PLANS = (("free", 10), ("starter", 20), ("pro", 14), ("enterprise", 6))
# Bigger plans place bigger orders, so "top customers" has a story to tell.
_PLAN_SPEND = {"free": 0.6, "starter": 1.0, "pro": 1.6, "enterprise": 2.8}
_DRAFTS = (
    (
        "Spring pricing update",
        "Starter goes to $19 a month on April 1; existing plans keep their price for a year.",
        "Maya Chen",
    ),
    (
        "Incident report: invoice emails delayed",
        "On June 12 invoice emails were late by up to six hours. No invoice was lost.",
        "Tomás Rivera",
    ),
    (
        "New: CSV export for orders",
        "Every order list now has an Export button; the file opens in any spreadsheet.",
        "Priya Natarajan",
    ),
    (
        "Holiday support hours",
        "Support answers within four hours on weekdays and twelve on holidays.",
        "Jonas Berg",
    ),
    (
        "How refunds work",
        "A refund returns the whole order to the card it was paid with, in five to ten days.",
        "Maya Chen",
    ),
    (
        "Welcome to the new dashboard",
        "Orders, invoices and drafts now live on one page.",
        "Aiko Tanaka",
    ),
)


def _iso(moment: datetime) -> str:
    # One fixed shape (milliseconds, +00:00) so text order is time order in SQL.
    return moment.astimezone(UTC).isoformat(timespec="milliseconds")


def _seed_rows() -> dict[str, list[tuple[Any, ...]]]:
    """Every table's rows, the same on every call (a fixed seed, a fixed AS_OF)."""
    rng = random.Random(SEED)
    names = [f"{a} {b}" for a in _FIRST for b in _SECOND]
    rng.shuffle(names)
    accounts: list[tuple[Any, ...]] = []
    spend: dict[str, float] = {}
    for n in range(1, N_ACCOUNTS + 1):
        base = names[n - 1]
        name = f"{base} {rng.choice(_SUFFIX)}"
        plan = rng.choices([p for p, _ in _PLANS], weights=[w for _, w in _PLANS])[0]
        created = datetime(2022, 1, 1, tzinfo=UTC) + timedelta(seconds=rng.randrange(730 * 86_400))
        account_id = f"acc_{n:04d}"
        email = f"billing@{base.lower().replace(' ', '-')}.example"
        accounts.append((account_id, name, email, plan, _iso(created)))
        spend[account_id] = _PLAN_SPEND[plan] * rng.uniform(0.7, 1.3)
    ids = [a[0] for a in accounts]

    start = datetime(2024, 1, 1, tzinfo=UTC)
    span_s = int((AS_OF - start).total_seconds())
    raw_orders = []
    for _ in range(N_ORDERS):
        account_id = rng.choice(ids)
        created = start + timedelta(seconds=rng.randrange(span_s))
        cents = max(500, int(rng.lognormvariate(8.6, 0.7) * spend[account_id]))
        if (AS_OF - created).days < 10 and rng.random() < 0.6:
            status = "pending"  # recent orders are still being paid for
        else:
            status = "refunded" if rng.random() < 0.06 else "paid"
        raw_orders.append((created, account_id, cents, status, rng.randint(1, 8)))
    raw_orders.sort(key=lambda o: o[0])  # ids grow with time, like a real sequence
    orders = [
        (f"ord_{i:05d}", acc, cents, "USD", status, items, _iso(created))
        for i, (created, acc, cents, status, items) in enumerate(raw_orders, 1)
    ]

    raw_invoices = []
    for _ in range(N_INVOICES):
        account_id = rng.choice(ids)
        issued = (start + timedelta(seconds=rng.randrange(span_s))).replace(
            hour=9, minute=0, second=0, microsecond=0
        )
        due = (issued + timedelta(days=30)).replace(hour=0)
        cents = int(rng.uniform(49, 2_500) * 100 * spend[account_id])
        if due > AS_OF:
            status = "open"
        else:
            status = "overdue" if rng.random() < 0.15 else "paid"
        raw_invoices.append((issued, account_id, cents, status, due))
    raw_invoices.sort(key=lambda i: i[0])
    invoices = [
        (f"inv_{i:04d}", acc, cents, status, _iso(issued), _iso(due))
        for i, (issued, acc, cents, status, due) in enumerate(raw_invoices, 1)
    ]

    drafts: list[tuple[Any, ...]] = []
    for n, (title, body, author) in enumerate(_DRAFTS, 1):
        updated = AS_OF - timedelta(days=rng.randint(1, 60), minutes=rng.randrange(1440))
        # The last one is already out, so ALREADY_PUBLISHED can be seen at once.
        published = n == len(_DRAFTS)
        published_at = _iso(updated + timedelta(hours=2)) if published else None
        drafts.append(
            (f"draft_{n:02d}", title, body, author, _iso(updated), int(published), published_at)
        )
    return {"accounts": accounts, "orders": orders, "invoices": invoices, "drafts": drafts}


# ------------------------------------------------------------------ the file


def _build(path: Path) -> None:
    conn = sqlite3.connect(path, isolation_level=None)
    try:
        with transaction(conn):
            for statement in SCHEMA.split(";"):
                if statement.strip():
                    conn.execute(statement)
            for table, rows in _seed_rows().items():
                marks = ", ".join("?" * len(rows[0]))
                conn.executemany(f"INSERT INTO {table} VALUES ({marks})", rows)
            conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
    finally:
        conn.close()


class DemoDatabaseBusy(HostLoadError):
    """The demo database stayed locked by another program: nothing was changed."""

    code = "HOST_DEMO_BUSY"


class DemoDataWarning(UserWarning):
    """The demo database was damaged or from another version: kept aside, made afresh."""


def _version(path: Path) -> int | None:
    """The file's schema version; None if it is not a whole database. Busy means
    wait (up to BUSY_TIMEOUT_S), then DemoDatabaseBusy: never "rebuild it"."""
    try:
        conn = sqlite3.connect(
            f"{path.resolve().as_uri()}?mode=ro", uri=True, timeout=BUSY_TIMEOUT_S
        )
        try:
            conn.execute("SELECT count(*) FROM sqlite_master").fetchone()
            return int(conn.execute("PRAGMA user_version").fetchone()[0])
        finally:
            conn.close()
    except sqlite3.Error as exc:
        if is_busy(exc):
            raise DemoDatabaseBusy(
                f"The demo database {path} has been locked by another program for over "
                f"{BUSY_TIMEOUT_S} s: close it (or the other run-repl using it) and try again. "
                "It was not changed."
            ) from exc
        if is_damaged(exc):
            return None
        raise


@contextmanager
def _repairing(directory: Path) -> Iterator[None]:
    # One process at a time moves a bad file aside, so none moves a fresh one.
    try:
        import fcntl
    except ImportError:  # no flock here: the re-check below still narrows the window
        yield
        return
    fd = os.open(directory, os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)


def _install(path: Path, *, replace: bool) -> None:
    """Build the database beside `path`, then move it into place in one step."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp_name = tempfile.mkstemp(prefix=".demo-", suffix=".sqlite3.tmp", dir=path.parent)
    os.close(fd)
    tmp = Path(tmp_name)
    try:
        _build(tmp)
        if replace:
            os.replace(tmp, path)
            return
        try:
            # A hard link fails if the name exists: of two processes starting at
            # once, one wins and the other keeps the winner's file, which holds
            # the same data. A rename would swap the file under the winner.
            os.link(tmp, path)
        except FileExistsError:
            pass
        except OSError:
            # A file system without hard links: a rename, with a tiny window.
            if not path.exists():
                os.replace(tmp, path)
    finally:
        with suppress(FileNotFoundError):
            tmp.unlink()


def open_demo_db(data_dir: Path, *, warn: Callable[[str], None] | None = None) -> Path:
    """The demo database in `data_dir`, created and seeded if missing; its path.

    A file that is not a whole database, or holds another schema version, is
    moved aside (kept, timestamped) before a fresh one is made, and `warn` is
    told (by default a DemoDataWarning). One that is locked is waited for,
    then DemoDatabaseBusy: it is never replaced for being busy."""
    path = Path(data_dir) / DEMO_DB
    if not path.exists():
        _install(path, replace=False)
        return path
    if _version(path) == SCHEMA_VERSION:
        return path
    with _repairing(path.parent):
        if not path.exists():
            _install(path, replace=False)
            return path
        version = _version(path)  # again: another process may have repaired it meanwhile
        if version == SCHEMA_VERSION:
            return path
        why = "damaged" if version is None else f"version-{version}"
        kept = move_aside(path, why)
        _install(path, replace=False)
    what = (
        "was damaged" if version is None else f"has schema version {version}, not {SCHEMA_VERSION}"
    )
    message = (
        f"The demo database {path} {what}: it is kept as {kept.name} and a fresh demo "
        "database was made (approved publishes and refunds in the old one are not in it)."
    )
    if warn is not None:
        warn(message)
    else:
        warnings.warn(message, DemoDataWarning, stacklevel=2)
    return path


def reset_demo(data_dir: Path) -> Path:
    """Put the demo data back as it was first made (undo publishes and refunds)."""
    path = Path(data_dir) / DEMO_DB
    # A swap, not delete-then-build, so nobody ever finds the file missing.
    _install(path, replace=True)
    return path


# ------------------------------------------------------------------ the host functions


def _js_type(value: object) -> str:
    if value is None:
        return "null"
    if value is UNDEFINED:
        return "undefined"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return f"the number {value!r}"
    if isinstance(value, str):
        return "an empty string"
    return f"a {type(value).__name__}"


def _id_arg(value: object, name: str, example: str) -> str:
    if not isinstance(value, str) or not value:
        raise HostError(
            f"{name} must be an id string like {example!r}, not {_js_type(value)}.",
            code="INVALID_ARGUMENT",
        )
    return value


def _not_found(kind: str, value: str, example: str, lister: str) -> HostError:
    return HostError(
        f"No {kind} {value!r}. Ids look like {example!r}; {lister} lists them.",
        code="NOT_FOUND",
        details={"id": value},
    )


def _account(row: sqlite3.Row) -> Account:
    return {
        "id": row["id"],
        "name": row["name"],
        "email": row["email"],
        "plan": row["plan"],
        "created_at": datetime.fromisoformat(row["created_at"]),
    }


def _order(row: sqlite3.Row) -> Order:
    return {
        "id": row["id"],
        "account_id": row["account_id"],
        "amount": row["amount_cents"] / 100,
        "currency": row["currency"],
        "status": row["status"],
        "items": row["items"],
        "created_at": datetime.fromisoformat(row["created_at"]),
    }


def _invoice(row: sqlite3.Row) -> Invoice:
    return {
        "id": row["id"],
        "account_id": row["account_id"],
        "amount": row["amount_cents"] / 100,
        "status": row["status"],
        "issued_at": datetime.fromisoformat(row["issued_at"]),
        "due_date": datetime.fromisoformat(row["due_date"]),
    }


def _draft(row: sqlite3.Row) -> Draft:
    return {
        "id": row["id"],
        "title": row["title"],
        "body": row["body"],
        "author": row["author"],
        "updated_at": datetime.fromisoformat(row["updated_at"]),
        "published": bool(row["published"]),
        "published_at": (
            datetime.fromisoformat(row["published_at"]) if row["published_at"] else None
        ),
    }


def make_demo_host(
    data_dir: Path, *, warn: Callable[[str], None] | None = None
) -> dict[str, dict[str, Callable[..., Any]]]:
    """The demo's namespaces (crm, store, billing, documents, orders) over its database.

    `warn` hears about a damaged database kept aside (see open_demo_db)."""
    data_dir = Path(data_dir)
    db = open_demo_db(data_dir, warn=warn)

    @contextmanager
    def connect() -> Iterator[sqlite3.Connection]:
        # One connection per call: sync host functions run on a thread pool.
        if not db.exists():  # deleted while the app ran: make it again
            open_demo_db(data_dir, warn=warn)
        # mode=rw: never let a vanished file turn into an empty database.
        conn = sqlite3.connect(
            f"{db.resolve().as_uri()}?mode=rw", uri=True, timeout=10, isolation_level=None
        )
        conn.row_factory = sqlite3.Row
        try:
            yield conn
        finally:
            conn.close()

    def find_account(conn: sqlite3.Connection, account_id: str) -> sqlite3.Row:
        row = conn.execute("SELECT * FROM accounts WHERE id = ?", (account_id,)).fetchone()
        if row is None:
            raise _not_found("account", account_id, "acc_0001", "crm.listAccounts()")
        return row

    def listAccounts(limit: int | None = None) -> list[Account]:
        """All customer accounts (50), by id; `limit` keeps the first few.

        Each: {id, name, email, plan ("free" | "starter" | "pro" | "enterprise"),
        created_at (Date)}. Account ids are also the customer ids of store.listOrders."""
        if limit is UNDEFINED:
            limit = None
        if limit is not None and (
            isinstance(limit, bool) or not isinstance(limit, int) or limit < 0
        ):
            raise HostError(
                f"limit must be a whole number of at least 0, not {_js_type(limit)}.",
                code="INVALID_ARGUMENT",
            )
        with connect() as conn:
            rows = conn.execute(
                "SELECT * FROM accounts ORDER BY id LIMIT ?", (-1 if limit is None else limit,)
            ).fetchall()
        return [_account(r) for r in rows]

    def getAccount(accountId: str) -> Account:
        """One account by id (e.g. "acc_0001"): {id, name, email, plan, created_at}.

        Unknown ids throw an error with hostCode "NOT_FOUND". Like a remote CRM it
        takes a moment, so fetch several with Promise.all."""
        account_id = _id_arg(accountId, "accountId", "acc_0001")
        time.sleep(LATENCY_S)  # a sync function on the host's thread pool: others run meanwhile
        with connect() as conn:
            return _account(find_account(conn, account_id))

    def listOrders(customerId: str, status: str | None = None) -> list[Order]:
        """A customer's orders (about 100), newest first; `status` keeps one kind.

        Each: {id, account_id, amount (dollars), currency, status ("paid" |
        "refunded" | "pending"), items, created_at (Date)}."""
        account_id = _id_arg(customerId, "customerId", "acc_0001")
        if status is UNDEFINED:
            status = None
        if status is not None and status not in ORDER_STATUSES:
            raise HostError(
                f"status must be one of {', '.join(ORDER_STATUSES)} (or left out), not {status!r}.",
                code="INVALID_ARGUMENT",
            )
        with connect() as conn:
            find_account(conn, account_id)  # an unknown customer is a mistake, not "no orders"
            rows = conn.execute(
                "SELECT * FROM orders WHERE account_id = ? AND (? IS NULL OR status = ?) "
                "ORDER BY created_at DESC, id DESC",
                (account_id, status, status),
            ).fetchall()
        return [_order(r) for r in rows]

    def read_invoices(account_id: str) -> list[Invoice]:
        with connect() as conn:
            find_account(conn, account_id)
            rows = conn.execute(
                "SELECT * FROM invoices WHERE account_id = ? ORDER BY issued_at DESC, id DESC",
                (account_id,),
            ).fetchall()
        return [_invoice(r) for r in rows]

    async def listInvoices(accountId: str) -> list[Invoice]:
        """An account's invoices (about 20), newest first.

        Each: {id, account_id, amount (dollars), status ("paid" | "open" |
        "overdue"), issued_at (Date), due_date (Date)}. Async, like a remote
        billing service: Promise.all runs many at once."""
        account_id = _id_arg(accountId, "accountId", "acc_0001")
        await asyncio.sleep(LATENCY_S)  # the pretend network round trip
        return await asyncio.to_thread(read_invoices, account_id)

    def listDrafts() -> list[Draft]:
        """Document drafts: {id, title, body, author, updated_at, published, published_at}."""
        with connect() as conn:
            rows = conn.execute("SELECT * FROM drafts ORDER BY id").fetchall()
        return [_draft(r) for r in rows]

    def publish_check(conn: sqlite3.Connection, draft_id: str) -> sqlite3.Row:
        row = conn.execute("SELECT * FROM drafts WHERE id = ?", (draft_id,)).fetchone()
        if row is None:
            raise _not_found("draft", draft_id, "draft_01", "documents.listDrafts()")
        if row["published"]:
            raise HostError(
                f"Draft {draft_id} ({row['title']!r}) is already published.",
                code="ALREADY_PUBLISHED",
                details={"id": draft_id, "published_at": row["published_at"]},
            )
        return row

    def publish_message(draftId: object = None, *_: object) -> str:
        # Runs before anyone is asked: a draft that cannot be published fails here.
        draft_id = _id_arg(draftId, "draftId", "draft_01")
        with connect() as conn:
            row = publish_check(conn, draft_id)
        return f'Publish draft {draft_id} ("{row["title"]}")?'

    @requires_approval(message=publish_message)
    def publish(draftId: str) -> Draft:
        """Publish a draft (asks a person first). Returns the draft, now published.

        Errors: hostCode "NOT_FOUND", "ALREADY_PUBLISHED"; "RUN_APPROVAL_DENIED"
        (as code) when the person says no."""
        draft_id = _id_arg(draftId, "draftId", "draft_01")
        now = datetime.now(UTC)
        with connect() as conn:
            # IMMEDIATE takes the write lock before the check: two approvals of
            # the same draft cannot both publish it.
            with transaction(conn):
                publish_check(conn, draft_id)
                conn.execute(
                    "UPDATE drafts SET published = 1, published_at = ?, updated_at = ? WHERE id = ?",
                    (_iso(now), _iso(now), draft_id),
                )
                row = conn.execute("SELECT * FROM drafts WHERE id = ?", (draft_id,)).fetchone()
        return _draft(row)

    def refund_check(conn: sqlite3.Connection, order_id: str) -> sqlite3.Row:
        row = conn.execute(
            "SELECT orders.*, accounts.name AS account_name FROM orders "
            "JOIN accounts ON accounts.id = orders.account_id WHERE orders.id = ?",
            (order_id,),
        ).fetchone()
        if row is None:
            raise _not_found("order", order_id, "ord_00001", "store.listOrders(customerId)")
        if row["status"] == "refunded":
            raise HostError(
                f"Order {order_id} is already refunded.",
                code="ALREADY_REFUNDED",
                details={"id": order_id},
            )
        if row["status"] != "paid":
            raise HostError(
                f"Order {order_id} is {row['status']}, not paid: there is nothing to refund.",
                code="NOT_REFUNDABLE",
                details={"id": order_id, "status": row["status"]},
            )
        return row

    def refund_message(orderId: object = None, *_: object) -> str:
        order_id = _id_arg(orderId, "orderId", "ord_00001")
        with connect() as conn:
            row = refund_check(conn, order_id)
        amount = row["amount_cents"] / 100
        return (
            f"Refund ${amount:,.2f} {row['currency']} for order {order_id} "
            f"to {row['account_name']} ({row['account_id']})?"
        )

    @requires_approval(message=refund_message)
    def refund(orderId: str) -> Order:
        """Refund a paid order in full (asks a person first). Returns the order, now refunded.

        Errors: hostCode "NOT_FOUND", "ALREADY_REFUNDED", "NOT_REFUNDABLE" (still
        pending); "RUN_APPROVAL_DENIED" (as code) when the person says no."""
        order_id = _id_arg(orderId, "orderId", "ord_00001")
        with connect() as conn:
            with transaction(conn):  # see publish: check and write as one
                refund_check(conn, order_id)
                conn.execute("UPDATE orders SET status = 'refunded' WHERE id = ?", (order_id,))
                row = conn.execute("SELECT * FROM orders WHERE id = ?", (order_id,)).fetchone()
        return _order(row)

    return {
        "crm": {"listAccounts": listAccounts, "getAccount": getAccount},
        "store": {"listOrders": listOrders},
        "billing": {"listInvoices": listInvoices},
        "documents": {"listDrafts": listDrafts, "publish": publish},
        "orders": {"refund": refund},
    }


# ------------------------------------------------------------------ examples

# (title, TypeScript) pairs for the front ends' examples and help: the README's
# four first, then a few more. Every one runs against this host.
DEMO_EXAMPLES: list[tuple[str, str]] = [
    (
        "Orders of the first customer",
        """\
const [customer] = await crm.listAccounts(1);
const list = await store.listOrders(customer.id);
const total = list.reduce((sum: number, order: { amount: number }) => sum + order.amount, 0);
return { customer: customer.name, count: list.length, total: Math.round(total * 100) / 100 };
""",
    ),
    (
        "Account and overdue invoices, concurrently",
        """\
const accountId = "acc_0003";
const [account, invoices] = await Promise.all([
  crm.getAccount(accountId),
  billing.listInvoices(accountId),
]);
const overdue = invoices.filter((invoice: { status: string }) => invoice.status === "overdue");
return { account: account.name, overdue };
""",
    ),
    (
        "Publish a draft (asks for approval)",
        """\
const drafts = await documents.listDrafts();
const draft = drafts.find((d: { published: boolean }) => !d.published);
if (!draft) return "Every draft is published already: reset the demo data to start over (the palette's Reset the demo data, or run-repl reset-demo).";
return await documents.publish(draft.id);
""",
    ),
    (
        "Refund an order (asks for approval)",
        """\
const [latest] = await store.listOrders("acc_0002", "paid");
const refunded = await orders.refund(latest.id);
return { id: refunded.id, amount: refunded.amount, status: refunded.status };
""",
    ),
    (
        "Revenue by status",
        """\
type Totals = Record<string, { count: number; total: number }>;
const accounts = await crm.listAccounts();
const all = (await Promise.all(accounts.map((a) => store.listOrders(a.id)))).flat();
const byStatus = all.reduce((acc: Totals, order) => {
  const row = (acc[order.status] ??= { count: 0, total: 0 });
  row.count += 1;
  row.total = Math.round((row.total + order.amount) * 100) / 100;
  return acc;
}, {});
return byStatus;
""",
    ),
    (
        "Top customers by spend",
        """\
const accounts = await crm.listAccounts();
const spend = await Promise.all(
  accounts.map(async (account) => {
    const paid = await store.listOrders(account.id, "paid");
    const total = paid.reduce((sum: number, order) => sum + order.amount, 0);
    return { name: account.name, plan: account.plan, total: Math.round(total * 100) / 100 };
  }),
);
return spend.sort((a, b) => b.total - a.total).slice(0, 5);
""",
    ),
    (
        "Overdue invoices across all accounts",
        """\
// 50 calls at once: they wait together, so this takes about as long as one.
const accounts = await crm.listAccounts();
const invoices = await Promise.all(accounts.map((a) => billing.listInvoices(a.id)));
const rows = accounts
  .map((account, i) => {
    const overdue = invoices[i].filter((inv) => inv.status === "overdue");
    const owed = overdue.reduce((sum: number, inv) => sum + inv.amount, 0);
    return { account: account.name, invoices: overdue.length, owed: Math.round(owed * 100) / 100 };
  })
  .filter((row) => row.invoices > 0);
return rows.sort((a, b) => b.owed - a.owed);
""",
    ),
    (
        "Orders per month (dates are Dates)",
        """\
const list = await store.listOrders("acc_0001");
const perMonth: Record<string, number> = {};
for (const order of list) {
  const d: Date = order.created_at;
  const month = `${d.getUTCFullYear()}-${String(d.getUTCMonth() + 1).padStart(2, "0")}`;
  perMonth[month] = (perMonth[month] ?? 0) + 1;
}
return perMonth;
""",
    ),
    (
        "Catch a host error",
        """\
try {
  return await crm.getAccount("account_123");
} catch (e: any) {
  return { code: e.code, hostCode: e.hostCode, message: e.message };
}
""",
    ),
]

__all__ = [
    "AS_OF",
    "DEMO_DB",
    "DEMO_EXAMPLES",
    "LATENCY_S",
    "Account",
    "DemoDataWarning",
    "DemoDatabaseBusy",
    "Draft",
    "Invoice",
    "Order",
    "make_demo_host",
    "open_demo_db",
    "reset_demo",
]
