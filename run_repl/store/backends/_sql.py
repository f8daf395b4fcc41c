"""The SQL half the SQLite and PostgreSQL stores share, written once.

Rows to records and back (`approval_params`, `approval_from_row`, `run_row`,
`run_from_row`), the approval status predicates, the history's listing and
the value store's age eviction. Each backend passes its `Dialect`: how a
parameter is written (`:name` or `%(name)s`), which text its driver can bind,
and how a pattern is matched; the rest (the clock, locks, connections) stays
in the backend.

Before this module the two stores held copies, and the copies had drifted:
PostgreSQL's age eviction spared the value just written (`AND ref <> keep`)
and SQLite's did not. Both spare it now, as the byte budget always did.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from ...sandbox.wire.result_store import StoredItems
from ..budgets import INLINE_VALUE_BYTES, PREVIEW_BYTES
from ..json_budget import dumps, fit_envelope
from ..records import FINAL_STATUSES, PendingApproval, RunRecord, as_read, contains_pattern

APPROVAL_JSON = ("args", "payload")
"""The approval fields kept as JSON text."""
APPROVAL_COLUMNS = tuple(PendingApproval.model_fields)

RESUMED_STATUS = "(SELECT r.status FROM runs AS r WHERE r.id = runs.resumed_as) AS resumed_status"
"""How the run that resumed a paused one ended: one lookup by its id, beside the row."""
RUN_LISTED = (
    "id, started_at, duration_ms, status, source, host, error_code, value_ref, logs_ref, "
    "resumed_from, resumed_as, envelope_cut, owner, COALESCE(preview, envelope) AS envelope, "
    f"preview IS NOT NULL AS partial, {RESUMED_STATUS}"
)
"""A history row as `list_runs` reads it: the preview in place of a long envelope."""

OPEN_SQL = "status NOT IN ({})".format(", ".join(f"'{s}'" for s in sorted(FINAL_STATUSES)))


@dataclass(frozen=True)
class Dialect:
    """What differs between the two SQL backends' statements."""

    param: str
    """A named parameter, with `{}` for its name: `:{}` (sqlite3), `%({})s` (psycopg)."""
    text: Callable[[str], str]
    """`str` as the driver can bind it (lone surrogates, and for PostgreSQL NUL, replaced)."""
    like: str
    """A case-insensitive `LIKE` with backslash escapes, `{}` for the parameter."""

    def p(self, name: str) -> str:
        return self.param.format(name)


def sqlite_text(value: str) -> str:
    """A str SQLite can bind: a lone surrogate (from guest text) becomes U+FFFD."""
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return value.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
    return value


def pg_text(value: str) -> str:
    """A str PostgreSQL text can hold: NUL and lone surrogates become U+FFFD."""
    value = sqlite_text(value)
    return value.replace("\x00", "\ufffd") if "\x00" in value else value


SQLITE = Dialect(param=":{}", text=sqlite_text, like="LIKE {} ESCAPE '\\'")
POSTGRES = Dialect(param="%({})s", text=pg_text, like="ILIKE {}")


# ---------------------------------------------------------------------- approvals


def approval_params(a: PendingApproval, dialect: Dialect) -> dict[str, Any]:
    """An approval's row: JSON fields as text, every text bindable."""
    data = a.model_dump()
    for key in APPROVAL_JSON:
        data[key] = dumps(data[key])
    for key, value in data.items():
        if isinstance(value, str):
            data[key] = dialect.text(value)
    return data


def approval_from_row(row: Mapping[str, Any], now: float | None = None) -> PendingApproval:
    """The approval of a row (`SELECT *`, perhaps with the server's clock beside it)."""
    data = dict(row)
    exact = data.pop("source_exact", None)
    data.pop("server_now", None)
    if exact is not None:
        data["source"] = json.loads(exact)
    for key in APPROVAL_JSON:
        data[key] = json.loads(data[key])
    return as_read(PendingApproval.model_validate(data), now)


def approval_insert(columns: tuple[str, ...], dialect: Dialect) -> str:
    """Insert approvals; an id already there is left as it is."""
    return (
        f"INSERT INTO approvals ({', '.join(columns)}) "
        f"VALUES ({', '.join(dialect.p(c) for c in columns)}) ON CONFLICT (id) DO NOTHING"
    )


def approval_update(columns: tuple[str, ...], dialect: Dialect) -> str:
    return (
        "UPDATE approvals SET "
        + ", ".join(f"{c} = {dialect.p(c)}" for c in columns if c != "id")
        + f" WHERE id = {dialect.p('id')}"
    )


def pending_sql(now: str) -> str:
    """Waiting for a decision: pending, or claimed by a resume that never started and whose
    claim ran out by `now` (an SQL expression)."""
    return (
        "(status = 'pending' OR (status = 'claimed' AND executing_at IS NULL "
        f"AND COALESCE(claim_expires_at, 0) <= {now}))"
    )


def stuck_sql(now: str) -> str:
    """A resume that started and whose claim ran out by `now`: its calls may have run."""
    return (
        "((status = 'executing' OR (status = 'claimed' AND executing_at IS NOT NULL)) "
        f"AND COALESCE(claim_expires_at, 0) <= {now})"
    )


def lapsed_sql(now: str) -> str:
    """The batches with a started call that is not idempotent and whose lease ran out by
    `now`: what `settle_lapsed` ends (the status index finds them: a few open rows)."""
    return (
        "SELECT DISTINCT batch FROM approvals WHERE status = 'executing' AND NOT idempotent "
        f"AND COALESCE(claim_expires_at, 0) <= {now}"
    )


def renew_sql(until: str, dialect: Dialect) -> str:
    """The heartbeat: the lease of one claim on its approvals pushed to `until` (an SQL
    expression of the store's clock), only where that claim still holds them."""
    return (
        f"UPDATE approvals SET claim_expires_at = {until} WHERE claim_id = {dialect.p('claim')} "
        "AND status IN ('claimed', 'executing') RETURNING id"
    )


def approvals_where(
    status: str | None, now: str, dialect: Dialect, all_rows: str = "1 = 1"
) -> tuple[str, dict[str, Any]]:
    """`list_approvals`' filter: None (all), "pending", "stuck", "open", or one status."""
    if status is None:
        return all_rows, {}
    if status == "pending":
        return pending_sql(now), {}
    if status == "stuck":
        return stuck_sql(now), {}
    if status == "open":
        return OPEN_SQL, {}
    return f"status = {dialect.p('status')}", {"status": status}


# ---------------------------------------------------------------------- runs


def run_row(run: RunRecord, max_envelope_bytes: int, dialect: Dialect) -> dict[str, Any]:
    """A history row: the envelope cut to its budget, a preview when it is long, the
    bytes the budget counts. `started_at` is the run's own (a backend may restate it)."""
    envelope, cut = fit_envelope(run.envelope, max_envelope_bytes)
    text = dumps(envelope)
    preview = None
    if len(text) > PREVIEW_BYTES:
        preview = dumps(fit_envelope(envelope, PREVIEW_BYTES)[0])
    fix = dialect.text
    source = fix(run.source)
    return {
        "id": run.id,
        "started_at": run.started_at,
        "duration_ms": run.duration_ms,
        "status": fix(run.status),
        "source": source,
        "host": fix(run.host),
        "error_code": fix(run.error_code) if run.error_code else None,
        "value_ref": run.value_ref,
        "logs_ref": run.logs_ref,
        "resumed_from": run.resumed_from,
        "envelope": text,
        "preview": preview,
        "envelope_cut": bool(cut or run.envelope_cut),
        "owner": fix(run.owner) if run.owner is not None else None,
        "bytes": len(text) + len(source) + len(preview or ""),
    }


def run_from_row(row: Mapping[str, Any]) -> RunRecord:
    """The record of a history row (`RUN_LISTED`, or `SELECT *`: its budget columns dropped)."""
    data = dict(row)
    data.pop("bytes", None)
    data.pop("preview", None)
    data["envelope"] = json.loads(data["envelope"])
    return RunRecord.model_validate(data)


def get_run_sql(dialect: Dialect) -> str:
    """One history row, whole, with how the run that resumed it ended."""
    return f"SELECT *, {RESUMED_STATUS} FROM runs WHERE id = {dialect.p('id')}"


def set_resumed_as_sql(dialect: Dialect) -> str:
    """A paused run names the run that resumed it (never itself), in the transaction that
    records that run."""
    return (
        f"UPDATE runs SET resumed_as = {dialect.p('id')} "
        f"WHERE id = {dialect.p('resumed_from')} AND id <> {dialect.p('id')}"
    )


def list_runs_sql(limit: int, query: str | None, dialect: Dialect) -> tuple[str, dict[str, Any]]:
    """The newest `limit` runs, those whose source, status or error code holds `query`."""
    text = f"SELECT {RUN_LISTED} FROM runs"
    args: dict[str, Any] = {"limit": limit}
    if query:
        like = dialect.like.format(dialect.p("like"))
        text += f" WHERE source {like} OR status {like} OR COALESCE(error_code, '') {like}"
        args["like"] = contains_pattern(dialect.text(query))
    text += f" ORDER BY started_at DESC LIMIT {dialect.p('limit')}"
    return text, args


# ---------------------------------------------------------------------- values


def inline_chunks(stored: StoredItems) -> bytes | None:
    """A small value's chunks as its `results` row keeps them (`inline_chunks`), or None
    when it goes by chunk rows: each chunk ends with a newline, which JSON text never
    holds raw; UTF-8 with lone surrogates passed (guest strings may hold them)."""
    # Characters first: a big value (megabytes) is never joined or scanned to find out.
    if sum(len(c) for c in stored.chunks) + len(stored.chunks) > INLINE_VALUE_BYTES:
        return None
    if any("\n" in c for c in stored.chunks):
        return None
    data = "".join(c + "\n" for c in stored.chunks).encode("utf-8", "surrogatepass")
    return data if len(data) <= INLINE_VALUE_BYTES else None


def chunks_of_inline(data: bytes | memoryview) -> list[str]:
    return bytes(data).decode("utf-8", "surrogatepass").split("\n")[:-1]


def stored_items_from_row(row: Mapping[str, Any]) -> StoredItems:
    """A value's metadata from its `results` row, with its chunks when the row holds
    them (`inline_chunks`); else its chunks are read page by page."""
    inline = row["inline_chunks"]
    return StoredItems(
        ref=row["ref"],
        path=row["path"],
        total=row["total"],
        chunks=chunks_of_inline(inline) if inline is not None else [],
        rest=json.loads(row["rest"]) if row["rest"] else None,
        chunk_items=row["chunk_items"],
        kind=row["kind"],
        run_id=row["run_id"],
        created_at=row["created_at"],
    )


def aged_values_sql(cutoff: str) -> str:
    """The values older than `cutoff` (an SQL expression); the caller spares those just
    written, as the byte budget does."""
    return f"SELECT ref FROM results WHERE created_at < {cutoff}"


__all__ = [
    "APPROVAL_COLUMNS",
    "APPROVAL_JSON",
    "OPEN_SQL",
    "POSTGRES",
    "RESUMED_STATUS",
    "RUN_LISTED",
    "SQLITE",
    "Dialect",
    "aged_values_sql",
    "approval_from_row",
    "approval_insert",
    "approval_params",
    "approval_update",
    "approvals_where",
    "chunks_of_inline",
    "get_run_sql",
    "inline_chunks",
    "lapsed_sql",
    "list_runs_sql",
    "pending_sql",
    "pg_text",
    "renew_sql",
    "run_from_row",
    "run_row",
    "set_resumed_as_sql",
    "sqlite_text",
    "stored_items_from_row",
]
