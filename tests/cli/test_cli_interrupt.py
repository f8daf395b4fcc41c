"""Ctrl-C at any point of a `run-repl` start: exit 130, quietly (no traceback).

The command runs as its console script does (the entry point pyproject.toml
declares, imported and called by a two-line wrapper), in a process of its own,
and gets SIGINT at several points of its start: while Python imports run-repl,
while it opens the store, while the snippet runs.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import tomllib
from pathlib import Path
from typing import Any

import pytest

# Real processes talking for real: seconds each, out of the fast lane.
pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
SLOW = "let s = 0; for (let i = 0; i < 5e8; i++) s += i; return s"


def at_a_terminal() -> None:
    """The command starts as a shell's foreground job would, where Ctrl-C is not ignored.
    A suite started in the background (`pytest &`, a CI runner's shell without job
    control) has SIGINT ignored, and Python keeps an ignored SIGINT ignored in the
    processes it starts: a Ctrl-C would then never reach the command at all."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def python_c(probe: str, env: dict[str, str], **kwargs: Any) -> subprocess.CompletedProcess[str]:
    """`python -c probe` in a process of its own, its output kept."""
    return subprocess.run(
        [sys.executable, "-c", probe],
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
        **kwargs,
    )


def console_script(ready_fd: int) -> str:
    """What pip's `run-repl` wrapper runs (`from MODULE import FUNC; sys.exit(FUNC())`),
    saying on `ready_fd` once the entry module is imported: the times count from there.
    A Ctrl-C while Python starts, or while the wrapper imports run-repl's entry module
    (which imports nothing more: under a millisecond on a quiet machine, longer on a
    busy one), is Python's, before any code of ours can guard it."""
    entry = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["scripts"]["run-repl"]
    module, func = entry.split(":")
    return (
        f"import os, sys\nfrom {module} import {func}\n"
        f"os.write({ready_fd}, b'r')\nsys.exit({func}())"
    )


@pytest.mark.parametrize("after_s", [0.05, 0.1, 0.2, 0.35, 0.6, 1.0, 1.8])
def test_ctrl_c_during_start_exits_130_quietly(tmp_path: Path, after_s: float) -> None:
    snippet = tmp_path / "slow.ts"
    snippet.write_text(SLOW, encoding="utf-8")
    ready, ready_w = os.pipe()
    proc = subprocess.Popen(
        [
            sys.executable,
            "-c",
            console_script(ready_w),
            "run",
            str(snippet),
            "--data-dir",
            str(tmp_path),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        pass_fds=(ready_w,),
        preexec_fn=at_a_terminal,
        env={
            "PATH": "/usr/bin:/bin",
            "HOME": str(tmp_path),
            "PYTHONPATH": str(ROOT),
            "RUN_REPL_CONFIG_DIR": str(tmp_path / "config"),
        },
    )
    os.close(ready_w)
    try:
        assert os.read(ready, 1) == b"r"
    finally:
        os.close(ready)
    time.sleep(after_s)
    assert proc.poll() is None, "the command ended before the signal: make SLOW slower"
    os.kill(proc.pid, signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    assert "Traceback" not in err and "KeyboardInterrupt" not in err, err
    assert len(err.splitlines()) <= 2, err
    assert proc.returncode == 130, (proc.returncode, err)


def test_the_entry_module_imports_nothing_before_its_guard() -> None:
    """The window no code of ours can guard is the import of the entry module itself:
    it must stay that small (run-repl's CLI, the engine and the UI toolkits load inside
    the guard), or a Ctrl-C there prints a traceback again."""
    entry = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["scripts"]["run-repl"]
    module, func = entry.split(":")
    probe = (
        f"import sys\nfrom {module} import {func}\n"
        "print(' '.join(sorted(m for m in sys.modules if m.startswith(('run_repl', 'textual', "
        "'prompt_toolkit', 'pydantic', 'mcp')))))"
    )
    done = python_c(probe, {"PATH": "/usr/bin:/bin", "PYTHONPATH": str(ROOT)})
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == sorted({"run_repl", module}), done.stdout


def test_an_interrupt_python_could_not_raise_still_ends_the_command(tmp_path: Path) -> None:
    """A SIGINT that lands while Python runs a weakref callback (importlib's module-lock
    callback, during the imports of a start, under load) cannot be raised there: Python
    prints "Exception ignored in ..." and drops it, and the command went on to run the
    snippet to its end. The command takes such an interrupt as the Ctrl-C it was.

    Deterministic: the stand-in CLI raises KeyboardInterrupt inside a weakref callback,
    the way the signal did, then works for longer than the test waits."""
    probe = (
        "import sys, time, weakref\n"
        "import run_repl.cli\n"
        "class Lock: pass\n"
        "def interrupted(_ref):\n"
        "    raise KeyboardInterrupt\n"
        "def cli_main(argv):\n"
        "    lock = Lock()\n"
        "    ref = weakref.ref(lock, interrupted)\n"
        "    del lock\n"
        "    deadline = time.monotonic() + 30\n"
        "    while time.monotonic() < deadline:\n"
        "        sum(range(1000))\n"
        "    print('ran to the end')\n"
        "    return 0\n"
        "run_repl.cli.main = cli_main\n"
        "from run_repl.command import main\n"
        "sys.exit(main([]))\n"
    )
    done = python_c(
        probe,
        {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "PYTHONPATH": str(ROOT)},
        preexec_fn=at_a_terminal,
    )
    assert "ran to the end" not in done.stdout, "the interrupt was lost"
    assert "Exception ignored" not in done.stderr and "KeyboardInterrupt" not in done.stderr, (
        done.stderr
    )
    assert done.returncode == 130, (done.returncode, done.stderr)
