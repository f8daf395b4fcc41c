"""What one host call costs inside the guest runtime, counted, not timed: the
jobs QuickJS runs after a call settles, and the objects a call leaves behind
for the cycle collector (which walks the whole heap when enough pile up).

The real runtime (web/*.js and prelude.js) runs in a QuickJS context of this
process; a fake bridge stands in for the worker, so each step is exact."""

from __future__ import annotations

import json
from typing import Any

import _quickjs

from run_repl.sandbox.process.frames import PRELUDE_LINE_BASE
from run_repl.sandbox.process.guest_sources import runtime_source
from run_repl.sandbox.process.source import prepare_source


class Guest:
    """One run of a snippet on the guest runtime, its host calls answered by hand."""

    def __init__(self, source: str, namespaces: dict[str, Any]) -> None:
        self.sent: list[tuple[Any, ...]] = []
        self.ctx = _quickjs.Context()
        self.ctx.add_callable("__rr_send", self._send)
        self.dispatch = self.ctx.eval(runtime_source(PRELUDE_LINE_BASE))
        self.dispatch("line_base", PRELUDE_LINE_BASE)
        self.dispatch(
            "configure",
            json.dumps(
                {
                    "namespaces": namespaces,
                    "maxLogLines": 1000,
                    "maxLogLineBytes": 8192,
                    "maxValueBytes": 1 << 20,
                    "maxHostCalls": 100_000,
                    "maxInFlight": 1000,
                    "maxArgumentBytes": 1 << 20,
                    "maxArgumentBytesPerRun": 1 << 30,
                    "clockMs": 0,
                    "seed": [1, 2, 3, 4],
                    "values": None,
                }
            ),
        )
        self.dispatch("start", self.ctx.eval(prepare_source(source).code))
        self.drain()

    def _send(self, kind: str, *args: Any) -> None:
        self.sent.append((kind, *args))

    def drain(self) -> int:
        """Run the pending jobs; how many there were."""
        jobs = 0
        while self.ctx.execute_pending_job():
            jobs += 1
        return jobs

    def calls(self) -> list[tuple[Any, ...]]:
        return [s for s in self.sent if s[0] == "call"]

    def settle_last(self, value: str = "1") -> int:
        """Answer the latest call; the jobs that ran until the guest waited again."""
        call_id = self.calls()[-1][1]
        self.dispatch("settle", call_id, True, "J", value, 0.0)
        return self.drain()

    def objects(self) -> int:
        return int(self.ctx.memory()["obj_count"])

    def ended(self) -> str | None:
        return next((s[0] for s in self.sent if s[0] in ("done", "fail")), None)


TAG = "\u0000"  # the key that marks a tagged value on the wire
SEQUENTIAL = "let s = 0; for (let i = 0; i < 400; i++) s += await h.f(i); return s"


def test_an_awaited_call_resumes_the_snippet_in_one_job() -> None:
    # `await` on a host call takes a native promise's path: the settled call's
    # reaction resumes the snippet. A promise subclass seen as such by `await`
    # costs two jobs more per call (a thenable job and a second promise).
    guest = Guest(SEQUENTIAL, {"h": {"f": True}})
    jobs = [guest.settle_last() for _ in range(50)]
    assert jobs == [1] * 50
    assert len(guest.calls()) == 51


def test_a_call_leaves_no_garbage_for_the_cycle_collector() -> None:
    # Each window of 20 calls: the live objects must not grow. When nested
    # closures of the wire codec were made per call, 6 objects a call waited for
    # the collector (a window grew by 120 until a collection ran).
    guest = Guest(SEQUENTIAL, {"h": {"f": True}})
    for _ in range(10):
        guest.settle_last()
    growth = []
    for _ in range(10):
        before = guest.objects()
        for _ in range(20):
            guest.settle_last()
        growth.append(guest.objects() - before)
    assert max(growth) <= 2, growth


def test_tagged_values_still_cross_both_ways() -> None:
    # The general codec, now apart from the common case: arguments that are
    # not plain JSON, and a result that is not either.
    guest = Guest(
        "const r = await h.f(undefined, NaN, new Map([[1, 2]]), 5n);"
        " return [r instanceof Map, r.get('k'), typeof r.get('n')]",
        {"h": {"f": True}},
    )
    ((_, _, path, mode, text),) = guest.calls()
    assert path == "h.f"
    assert mode == "T"
    assert json.loads(text) == [
        {TAG: "u"},
        {TAG: "n", "v": "NaN"},
        {TAG: "m", "v": [[1, 2]]},
        {TAG: "b", "x": "5"},
    ]
    result = json.dumps({TAG: "m", "v": [["k", "v"], ["n", {TAG: "b", "x": "ff"}]]})
    guest.dispatch("settle", guest.calls()[-1][1], True, "T", result, 0.0)
    guest.drain()
    assert guest.ended() == "done"
    done = next(s for s in guest.sent if s[0] == "done")
    assert json.loads(done[2]) == [True, "v", "bigint"]


def test_an_awaited_call_is_seen_as_awaited_and_a_forgotten_one_is_not() -> None:
    # The snippet awaits one call and forgets another that settles: the run
    # ends with the forgotten call reported, never the awaited one.
    guest = Guest("h.f(1); await h.f(2); return 3", {"h": {"f": True}})
    first, second = guest.calls()
    guest.dispatch("settle", first[1], True, "J", "1", 0.0)
    guest.drain()
    guest.dispatch("settle", second[1], True, "J", "2", 0.0)
    guest.drain()
    assert guest.ended() == "fail"
    report = json.loads(next(s for s in guest.sent if s[0] == "fail")[1])
    assert report["error"]["code"] == "RUN_DETACHED_CALL"
    assert "never awaited" in report["error"]["message"]
    assert report["error"]["seq"] == first[1]
