"""Slow clients against `run-repl mcp --http` on 127.0.0.1: how long half-sent requests
stay open, and whether a normal request is served meanwhile.

    python bench/http_slow_clients.py [--clients 1000] [--header-timeout 2]

Starts its own server (a temporary data directory, a token in the environment,
`[mcp] header_timeout_s` as given), opens the clients (each sends half a
request line and stops), makes one normal request while they hang, and prints
how many the server closed and when. Bounded: it gives up after 60 s and ends
the server it started, by its pid.
"""

from __future__ import annotations

import argparse
import os
import re
import select
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

TOKEN = "bench-token-0123456789abcdefghijkl"
INIT = (
    b'{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18",'
    b'"capabilities":{},"clientInfo":{"name":"bench","version":"1"}}}'
)


def start(data: Path, header_timeout: float) -> tuple[subprocess.Popen[str], int]:
    config = data / "config"
    config.mkdir(parents=True)
    (config / "config.toml").write_text(f"[mcp]\nheader_timeout_s = {header_timeout}\n")
    env = {
        **os.environ,
        "HOME": str(data),
        "RUN_REPL_CONFIG_DIR": str(config),
        "RUN_REPL_MCP_TOKEN": TOKEN,
    }
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "run_repl.cli",
            "mcp",
            "--http",
            "127.0.0.1:0",
            "--data-dir",
            str(data / "d"),
        ],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    assert process.stderr is not None
    for line in process.stderr:
        found = re.search(r"serving http://127\.0\.0\.1:(\d+)/mcp$", line.rstrip())
        if found:
            return process, int(found.group(1))
    raise SystemExit(f"the server did not start (exit {process.wait()})")


def normal_request(port: int) -> tuple[int, float]:
    began = time.monotonic()
    with socket.create_connection(("127.0.0.1", port), timeout=30) as s:
        s.sendall(
            b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer "
            + TOKEN.encode()
            + b"\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream"
            + b"\r\nConnection: close\r\nContent-Length: "
            + str(len(INIT)).encode()
            + b"\r\n\r\n"
            + INIT
        )
        head = s.recv(64)
    return int(head.split()[1]), time.monotonic() - began


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--clients", type=int, default=1000)
    parser.add_argument("--header-timeout", type=float, default=2.0)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        process, port = start(Path(tmp), args.header_timeout)
        try:
            opened: list[socket.socket] = []
            for _ in range(args.clients):
                s = socket.create_connection(("127.0.0.1", port), timeout=10)
                s.sendall(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ")
                s.setblocking(False)
                opened.append(s)
            began = time.monotonic()
            status, took, tries = 0, 0.0, 0
            while time.monotonic() - began < 60:  # refused while the slots are held
                tries += 1
                try:
                    status, took = normal_request(port)
                except (ConnectionResetError, BrokenPipeError, TimeoutError):
                    time.sleep(0.2)
                    continue
                break
            served_after = time.monotonic() - began
            closed_at: dict[int, float] = {}
            poll = select.poll()
            by_fd = {s.fileno(): s for s in opened}
            for fd in by_fd:
                poll.register(fd, select.POLLIN | select.POLLHUP | select.POLLERR)
            while len(closed_at) < len(opened) and time.monotonic() - began < 60:
                for fd, _ in poll.poll(500):
                    try:
                        data = by_fd[fd].recv(4096)
                    except BlockingIOError:
                        continue
                    except ConnectionResetError:
                        data = b""
                    if not data:
                        closed_at[fd] = time.monotonic() - began
                        poll.unregister(fd)
            times = sorted(closed_at.values())
            print(f"clients: {len(opened)}, header_timeout_s: {args.header_timeout:g}")
            print(
                f"normal request: HTTP {status} in {took * 1000:.0f} ms, served "
                f"{served_after:.1f} s after the slow clients connected ({tries} tries)"
            )
            print(f"closed by the server: {len(times)} of {len(opened)} within 60 s")
            if times:
                print(f"last closed after {times[-1]:.1f} s (first {times[0]:.1f} s)")
            for s in opened:
                s.close()
        finally:
            process.send_signal(signal.SIGINT)
            process.wait(timeout=30)


if __name__ == "__main__":
    main()
