"""`run-repl` commands for tests, each in a process of its own, forked from one
that has imported run-repl already.

Starting `python -m run_repl.cli mcp` costs ~0.7 s of CPU before the command does
anything (the interpreter, the MCP SDK, the engine), and the MCP tests start one
per test. Here one process per test process (the zygote) imports them once and
forks each command: every command still runs in a process of its own, on the
pipes, environment, working directory and arguments it was given, through
`run_repl.cli.main(argv)`, and ends as a process does (threads joined, atexit).
Only the interpreter's start is shared; the tests about that start a real
`python -m run_repl.cli` (tests/cli, tests/mcp/test_mcp_runs.py).

`command(*argv)` is what a test runs instead of `python -m run_repl.cli ARGV`,
and `python_c(script, *args)` instead of `python -c SCRIPT ARGS` (the store
tests' other machines):

    python -I -S forked_cli.py --client SOCKET (cli | c) ARGV...

a small process that hands its stdin, stdout, stderr, environment and working
directory to the zygote, passes on the signals it gets (SIGTERM, SIGINT,
SIGHUP) to the command, and exits as the command did (with its status, or by
its signal). Killed outright, it takes the command with it. This file's top
level imports only the standard library, so the client starts in ~15 ms.
"""

from __future__ import annotations

import contextlib
import gc
import json
import os
import select
import signal
import socket
import struct
import sys
from typing import Any

REPLY = struct.Struct("<ci")  # b"P" + the command's pid, then b"E" + its exit code
FORWARDED = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP)
PARENT_WATCH_S = 1.0

_zygote: tuple[Any, str] | None = None  # (the Popen, the socket's path) in a test process


# ------------------------------------------------------------------ the test process


def command(*argv: str) -> list[str]:
    """The argv that runs `run-repl ARGV` through the zygote (started on first use)."""
    return _client("cli", *argv)


def python_c(script: str, *args: str) -> list[str]:
    """The argv that runs `python -c SCRIPT ARGS` through the zygote: a script of the
    tests' own that plays another machine (it sees run-repl imported already)."""
    return _client("c", script, *args)


def _client(mode: str, *argv: str) -> list[str]:
    return [sys.executable, "-I", "-S", __file__, "--client", _socket_path(), mode, *argv]


def _socket_path() -> str:
    global _zygote
    if _zygote is None:
        import atexit
        import subprocess
        import tempfile

        path = os.path.join(tempfile.mkdtemp(prefix="forked-cli-"), "zygote.sock")
        env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in sys.path if p))
        proc = subprocess.Popen(
            [sys.executable, __file__, "--zygote", path, str(os.getpid())],
            stdout=subprocess.PIPE,
            env=env,
        )
        assert proc.stdout is not None
        if proc.stdout.readline() != b"ready\n":
            proc.kill()
            raise RuntimeError("the run-repl zygote did not start (its stderr says why)")
        atexit.register(_end, proc)
        _zygote = (proc, path)
    return _zygote[1]


def _end(proc: Any) -> None:
    proc.terminate()  # the zygote ends the commands still running, then itself
    try:
        proc.wait(timeout=10)
    except Exception:
        proc.kill()
        proc.wait()
    proc.stdout.close()  # its "ready" pipe


# ------------------------------------------------------------------ the zygote


def _zygote_main(path: str, test_pid: int) -> None:
    import run_repl.cli
    import run_repl.mcp.run_command
    import run_repl.mcp.server  # what `run-repl mcp` imports, once for every command
    import run_repl.store.approvals.flow
    import run_repl.store.backends.postgres

    # What the imports made lives as long as every command: kept out of their
    # collections, which would otherwise touch (and so copy) all of it in each.
    gc.collect()
    gc.freeze()
    request = _serve(path, test_pid)  # returns only in a forked child
    if request is None:
        os._exit(0)
    mode, argv, env, cwd = request
    os.chdir(cwd)
    os.environ.clear()
    os.environ.update(env)
    if mode == "c":  # as `python -c`: its exceptions end the interpreter as they would there
        sys.argv = ["-c", *argv[1:]]
        exec(compile(argv[0], "<string>", "exec"), {"__name__": "__main__"})
        raise SystemExit(0)
    sys.argv = ["run-repl", *argv]
    raise SystemExit(run_repl.cli.main(argv))  # the interpreter ends here as a fresh one would


Request = tuple[str, list[str], dict[str, str], str]  # mode ("cli" or "c"), argv, env, cwd


def _serve(path: str, test_pid: int) -> Request | None:
    """Fork a command per client until the test process goes; in a child, return
    what it is to run (with its stdio in place); in the zygote, None at the end."""
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(path)
    listener.listen(64)
    wake_r, wake_w = os.pipe()
    os.set_blocking(wake_r, False)
    os.set_blocking(wake_w, False)
    signal.set_wakeup_fd(wake_w, warn_on_full_buffer=False)
    signal.signal(signal.SIGCHLD, lambda *_: None)
    stopped: list[int] = []
    signal.signal(signal.SIGTERM, lambda signum, _frame: stopped.append(signum))
    clients: dict[int, socket.socket] = {}  # command pid -> its client's connection
    os.write(1, b"ready\n")
    while os.getppid() == test_pid and not stopped:
        try:
            ready, _, _ = select.select(
                [listener, wake_r, *clients.values()], [], [], PARENT_WATCH_S
            )
        except InterruptedError:
            continue
        if wake_r in ready:
            with contextlib.suppress(BlockingIOError):
                os.read(wake_r, 4096)  # a byte per signal: only the wake-up matters
        _reap(clients)
        for pid, conn in list(clients.items()):
            if conn in ready and _gone(conn):
                _kill(pid)  # its client was killed: so is the command, as with a process
        if listener not in ready:
            continue
        conn, _ = listener.accept()
        try:
            request, fds = _receive(conn)
        except (OSError, ValueError):
            conn.close()
            continue
        pid = os.fork()
        if pid == 0:
            listener.close()
            for other in clients.values():
                other.close()
            conn.close()
            signal.set_wakeup_fd(-1)
            os.close(wake_r)
            os.close(wake_w)
            signal.signal(signal.SIGCHLD, signal.SIG_DFL)
            signal.signal(signal.SIGTERM, signal.SIG_DFL)
            for target, fd in enumerate(fds):  # received fds are above 2: none is a target
                os.dup2(fd, target)
                os.close(fd)
            return request
        for fd in fds:
            os.close(fd)
        clients[pid] = conn
        try:
            conn.sendall(REPLY.pack(b"P", pid))
        except OSError:
            _kill(pid)
    for pid in clients:  # the test process is gone or done: so are its commands
        _kill(pid)
    for pid in clients:
        with contextlib.suppress(ChildProcessError):
            os.waitpid(pid, 0)
    return None


def _gone(conn: socket.socket) -> bool:
    try:
        return not conn.recv(1, socket.MSG_PEEK)
    except OSError:
        return True


def _receive(conn: socket.socket) -> tuple[Request, list[int]]:
    data, fds, _flags, _addr = socket.recv_fds(conn, 1 << 20, 3)
    try:
        while not data.endswith(b"\n"):
            more = conn.recv(1 << 20)
            if not more:
                raise ValueError("the client went away mid-request")
            data += more
        if len(fds) != 3:
            raise ValueError("a request without its stdin, stdout and stderr")
        body = json.loads(data)
        request = (str(body["mode"]), list(body["argv"]), dict(body["env"]), str(body["cwd"]))
    except (OSError, ValueError, KeyError, TypeError):
        for fd in fds:
            os.close(fd)
        raise ValueError("not a request") from None
    return request, fds


def _reap(clients: dict[int, socket.socket]) -> None:
    while True:
        try:
            pid, status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return
        conn = clients.pop(pid, None)
        if conn is not None:
            try:
                conn.sendall(REPLY.pack(b"E", os.waitstatus_to_exitcode(status)))
            except OSError:
                pass
            conn.close()


def _kill(pid: int) -> None:
    try:
        os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


# ------------------------------------------------------------------ the client


def _client_main(path: str, mode: str, argv: list[str]) -> None:
    conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    conn.connect(path)
    request = {"mode": mode, "argv": argv, "env": dict(os.environ), "cwd": os.getcwd()}
    body = json.dumps(request) + "\n"
    socket.send_fds(conn, [body.encode()], [0, 1, 2])
    pid = 0
    early: list[int] = []  # signals that came before the command's pid
    buffer = b""

    def forward(signum: int, _frame: object) -> None:
        if pid:
            os.kill(pid, signum)
        else:
            early.append(signum)

    for signum in FORWARDED:
        signal.signal(signum, forward)
    while True:
        try:
            chunk = conn.recv(64)
        except InterruptedError:
            continue
        if not chunk:
            os._exit(70)  # the zygote went away
        buffer += chunk
        while len(buffer) >= REPLY.size:
            kind, value = REPLY.unpack_from(buffer)
            buffer = buffer[REPLY.size :]
            if kind == b"P":
                pid = value
                for signum in early:
                    os.kill(pid, signum)
            elif value >= 0:
                os._exit(value)
            else:  # ended by a signal: so do we, so the caller sees the same
                signal.signal(-value, signal.SIG_DFL)
                os.kill(os.getpid(), -value)
                os._exit(128 - value)


if __name__ == "__main__":
    if sys.argv[1] == "--client":
        _client_main(sys.argv[2], sys.argv[3], sys.argv[4:])
    elif sys.argv[1] == "--zygote":
        _zygote_main(sys.argv[2], int(sys.argv[3]))
