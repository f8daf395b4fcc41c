"""The worker's outbox: host calls leave in small batches, so the parent serves
the first while the guest makes the rest; console lines keep their big batches;
nothing is lost or reordered."""

from __future__ import annotations

import json

import pytest

from run_repl.sandbox.process import frames, worker


@pytest.fixture
def outbox(monkeypatch: pytest.MonkeyPatch) -> tuple[worker._Outbox, list[bytes]]:
    written: list[bytes] = []
    monkeypatch.setattr(worker, "_write_raw", written.append)
    box = worker._Outbox()
    # No flusher thread here: it watches the parent process, which a test has not.
    box.started = True
    box.connect(frames.frame, frames.Kind.LOG_BATCH)
    return box, written


def test_host_calls_leave_in_batches_of_about_call_batch_bytes(
    outbox: tuple[worker._Outbox, list[bytes]],
) -> None:
    box, written = outbox
    calls = [frames.host_call_frame(i, "api.items.get", "J", f"[{i}]") for i in range(1, 401)]
    for data in calls:
        box.add_frame(data)
    assert written, "calls made in one stretch waited for the guest to go idle"
    box.flush()
    assert b"".join(written) == b"".join(calls)  # all of them, in order, once
    largest = max(len(c) for c in calls)
    assert all(len(w) < worker.CALL_BATCH_BYTES + largest for w in written)
    assert len(written) >= len(b"".join(calls)) // (worker.CALL_BATCH_BYTES + largest)


def test_console_lines_still_wait_for_a_big_batch(
    outbox: tuple[worker._Outbox, list[bytes]],
) -> None:
    box, written = outbox
    for i in range(300):  # about 9 KiB of lines: under BATCH_BYTES
        box.add_line(0, json.dumps(f"line {i} " + "x" * 20))  # the guest sends JSON text
    assert written == []
    box.flush()
    ((kind, payload),) = frames.FrameReader().feed(b"".join(written))
    assert kind == frames.Kind.LOG_BATCH
    assert isinstance(frames.decode(kind, payload), frames.LogBatch)
    assert len(frames.decode(kind, payload).lines) == 300


def test_a_line_logged_before_a_call_arrives_before_it(
    outbox: tuple[worker._Outbox, list[bytes]],
) -> None:
    box, written = outbox
    box.add_line(1, json.dumps("about to call"))
    call = frames.host_call_frame(1, "h.f", "J", "[" + "7," * 1200 + "7]")  # over a batch
    box.add_frame(call)
    received = frames.FrameReader().feed(b"".join(written))
    assert [kind for kind, _ in received] == [frames.Kind.LOG_BATCH, frames.Kind.HOST_CALL]
