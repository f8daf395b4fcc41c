"""The zygote the MCP and store tests start their other processes from behaves, to
the test, as the process it stands for: its output, status, signals and death."""

from __future__ import annotations

import signal
import subprocess
import time
from pathlib import Path

import forked_cli


def test_a_command_gets_its_stdio_environment_and_directory_and_its_status_comes_back(
    tmp_path: Path,
) -> None:
    script = (
        "import os, sys\n"
        "print(sys.argv[1:], os.getcwd(), os.environ.get('WHO'), sys.stdin.read())\n"
        "print('to stderr', file=sys.stderr)\n"
        "sys.exit(3)"
    )
    done = subprocess.run(
        forked_cli.python_c(script, "a", "b"),
        input="from stdin",
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env={"WHO": "tester"},
        timeout=60,
    )
    assert done.returncode == 3
    assert done.stdout == f"['a', 'b'] {tmp_path} tester from stdin\n"
    assert done.stderr == "to stderr\n"

    usage = subprocess.run(
        forked_cli.command("no-such-command"), capture_output=True, text=True, timeout=60
    )
    assert usage.returncode == 2 and "is not a command" in usage.stderr


def test_signals_reach_the_command_and_a_killed_client_takes_it_along(tmp_path: Path) -> None:
    pid_file = tmp_path / "pid"
    script = (
        "import os, sys, time\n"
        f"open({str(pid_file)!r}, 'w').write(str(os.getpid()))\n"
        "time.sleep(60)"
    )
    for how, status in ((signal.SIGTERM, -signal.SIGTERM), (signal.SIGKILL, -signal.SIGKILL)):
        pid_file.unlink(missing_ok=True)
        proc = subprocess.Popen(forked_cli.python_c(script))
        while not pid_file.exists() or not pid_file.read_text():
            time.sleep(0.01)
        command_pid = int(pid_file.read_text())
        assert command_pid != proc.pid  # the command is the zygote's child, not the client
        proc.send_signal(how)
        assert proc.wait(timeout=30) == status
        deadline = time.monotonic() + 30
        while Path(f"/proc/{command_pid}").exists() and time.monotonic() < deadline:
            time.sleep(0.01)
        assert not Path(f"/proc/{command_pid}").exists(), f"the command outlived {how.name}"
