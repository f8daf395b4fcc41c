"""The OS walls around each worker (defence in depth behind QuickJS): probed
from inside real workers through a test-only pool option that no snippet can
reach."""

from __future__ import annotations

import sys

import pytest

from run_repl.sandbox.process.confine import Confinement
from run_repl.sandbox.runner import Runner
from run_repl.sandbox.session.pool import WorkerPool

AVAILABLE = Confinement().available()
# What stops each attempt: any one of these layers.
BLOCKED_BY = {
    "open_for_writing": {"seccomp", "landlock"},
    "open_for_reading": {"seccomp", "landlock"},
    "execve": {"seccomp", "landlock"},
    "tcp_socket": {"seccomp"},
    "unix_socket": {"seccomp"},
    "fork": {"seccomp"},
    "executable_memory": {"seccomp"},
    "signal_parent": {"seccomp", "landlock"},
    "limit_parent": {"seccomp"},
    "raise_own_limit": {"rlimits"},
}


async def probe(mode: str = "fork", skip: tuple[str, ...] = ()) -> tuple[dict[str, str], list[str]]:
    options: tuple[str, ...] = ("--probe",)
    for layer in skip:
        options += ("--skip", layer)
    pool = WorkerPool(mode=mode, _test_options=options)  # type: ignore[arg-type]
    try:
        result = await Runner(pool=pool).run("1")
    finally:
        pool.close()
    assert result.status == "ok", result.error
    assert result.stats.confinement is not None
    return result.value, result.stats.confinement


def test_this_machine_offers_the_layers_we_expect() -> None:
    assert {"fds", "env", "rlimits"} <= set(AVAILABLE)
    if sys.platform.startswith("linux"):
        assert {"no_new_privs", "capabilities"} <= set(AVAILABLE)
        try:
            import pyseccomp  # noqa: F401  (a dependency on Linux, over the system's libseccomp)
        except (ImportError, RuntimeError):
            pass
        else:
            assert "seccomp" in AVAILABLE


@pytest.mark.parametrize("mode", ["fork", "spawn"])
async def test_a_worker_can_open_connect_or_start_nothing(mode: str) -> None:
    found, layers = await probe(mode)
    assert layers == AVAILABLE
    for attempt, blockers in BLOCKED_BY.items():
        if blockers & set(layers):
            assert found[attempt].startswith("denied"), (attempt, found[attempt])
    assert found["thread"] == "allowed"  # what the worker itself needs
    assert found["lower_own_limit"] == "allowed"
    assert found["open_fds"] == "0,1,2,3,4"  # the two pipes, stderr, two /proc/self files
    assert found["environment"] == ""
    assert found["rlimit_fsize"] == "0"
    assert int(found["rlimit_nofile"]) <= 16


@pytest.mark.parametrize("skipped", ["seccomp", "landlock"])
async def test_each_layer_holds_without_the_other(skipped: str) -> None:
    if skipped not in AVAILABLE:
        pytest.fail(f"{skipped} is not available on this machine: {AVAILABLE}")
    found, layers = await probe(skip=(skipped,))
    assert skipped not in layers
    assert layers == [layer for layer in AVAILABLE if layer != skipped]
    for attempt, blockers in BLOCKED_BY.items():
        if blockers & set(layers):
            assert found[attempt].startswith("denied"), (attempt, found[attempt])
    if skipped == "seccomp":
        # What only seccomp forbids goes through; the files stay out of reach.
        assert found["tcp_socket"] == "allowed"
        assert found["open_for_writing"] == "denied: EACCES"


async def test_runs_work_and_say_so_where_layers_are_missing() -> None:
    pool = WorkerPool(_test_options=("--skip", "seccomp", "--skip", "landlock"))
    try:
        result = await Runner(pool=pool).run("let x: number = 40; x + 2")
    finally:
        pool.close()
    assert result.value == 42
    assert result.stats.confinement == [
        layer for layer in AVAILABLE if layer not in ("seccomp", "landlock")
    ]


async def test_per_run_os_limits_follow_the_run() -> None:
    from run_repl import Limits

    pool = WorkerPool(_test_options=("--probe",))
    try:
        runner = Runner(pool=pool)
        small = await runner.run("1", limits=Limits(memory_bytes=16 << 20, timeout_ms=2_000))
        large = await runner.run("1", limits=Limits(memory_bytes=512 << 20, timeout_ms=60_000))
    finally:
        pool.close()
    assert int(small.value["rlimit_as"]) < int(large.value["rlimit_as"])
    assert (small.value["rlimit_cpu"], large.value["rlimit_cpu"]) == ("7", "65")


async def test_the_guest_cannot_reach_the_probe() -> None:
    from run_repl import run

    result = await run(
        "return [typeof probe, typeof __rr_send, typeof globalThis.process, typeof require]"
    )
    assert result.value == ["undefined", "undefined", "undefined", "undefined"]


CHILD_MODULES_ALLOWED = {"run_repl", "run_repl.sandbox", "run_repl.sandbox.errors"}


@pytest.mark.parametrize("mode", ["fork", "spawn"])
async def test_a_worker_has_loaded_nothing_of_run_repl_but_its_own_modules_and_the_errors(
    mode: str,
) -> None:
    found, _layers = await probe(mode)
    loaded = set(found["modules"].split(","))
    assert "run_repl.sandbox.process.worker" in loaded
    others = {m for m in loaded if not m.startswith("run_repl.sandbox.process")}
    assert others <= CHILD_MODULES_ALLOWED, sorted(others - CHILD_MODULES_ALLOWED)
    assert found["pydantic"] == "absent"
