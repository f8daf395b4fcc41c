"""A run whose value has an object key no JSON text can hold as it is (a lone
surrogate) is still kept in the history, the key escaped."""

from __future__ import annotations

from run_repl.sandbox.result import RunResult
from run_repl.store import Store
from run_repl.store.approvals.flow import record_run


def test_a_run_with_a_lone_surrogate_key_is_kept_with_the_key_escaped(store: Store) -> None:
    result = RunResult(status="ok", run_id="run_surrogate", value={"\ud800": 1, "ok": 2})
    record_run(store, result, source="return {'\\ud800': 1, ok: 2}", host="demo")
    kept = store.get_run("run_surrogate")
    assert kept is not None and kept.status == "ok"
    value = kept.envelope["value"]
    assert value["ok"] == 2 and len(value) == 2
    [escaped] = [k for k in value if k != "ok"]
    assert "\ud800" not in escaped and escaped.encode("utf-8")  # text every store can hold
    assert [r.id for r in store.list_runs()] == ["run_surrogate"]
