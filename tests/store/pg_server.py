"""A throwaway PostgreSQL server: `initdb` in a temporary directory, loopback only.

The tests (one server for a whole pytest run, see tests/conftest.py), `.ci/run`
and `bench/store.py` use it; nothing of it is part of run-repl itself.

    python tests/store/pg_server.py find                 # where the server programs are (or exit 1)
    python tests/store/pg_server.py start DIR [--fast] [--die-with PID]
                                                         # prints: export RUN_REPL_TEST_PG_URL=...
    python tests/store/pg_server.py stop DIR             # stops it and removes DIR

The server outlives whatever started it unless someone stops it, so each start
also starts a watchdog (`watch`, a process of its own session, out of reach of
the terminal's Ctrl-C) that stops the server once its owner is gone, however it
went (SIGKILL included): the process that holds the write end of a pipe whose
read end is the watchdog's stdin (EOF when it dies), and `--die-with PID`.

It listens on 127.0.0.1 (a free port) and a socket in DIR; TCP connections
authenticate with a password (scram-sha-256), as a team's server would. As
root, the server runs as the `postgres` user (or `nobody`): PostgreSQL refuses
to run as root. `--fast` turns fsync off: for tests, never for figures.
"""

from __future__ import annotations

import argparse
import glob
import os
import pwd
import secrets
import select
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path

USER = "runrepl"
DATABASE = "run_repl_test"
URL_FILE = "url"
# The benches' server: pg_stat_statements loaded, every statement counted (nested ones too).
STATEMENT_COUNTS = (
    "-c shared_preload_libraries=pg_stat_statements",
    "-c pg_stat_statements.track=all",
)
WATCH_POLL_S = 0.5  # how often the watchdog looks at the `--die-with` process


class ServerUnavailable(RuntimeError):
    """No PostgreSQL server programs on this machine (or they would not start)."""


def find_bindir() -> Path | None:
    """Where initdb, pg_ctl and postgres are: pg_config's answer, Debian's
    /usr/lib/postgresql/N/bin (the newest), or PATH."""
    candidates: list[Path] = []
    if shutil.which("pg_config"):
        try:
            out = subprocess.run(
                ["pg_config", "--bindir"], capture_output=True, text=True, check=True
            )
            candidates.append(Path(out.stdout.strip()))
        except (OSError, subprocess.CalledProcessError):
            pass
    debian = sorted(
        glob.glob("/usr/lib/postgresql/*/bin"), key=lambda p: int(Path(p).parent.name), reverse=True
    )
    candidates += [Path(p) for p in debian]
    if shutil.which("initdb"):
        candidates.append(Path(shutil.which("initdb")).resolve().parent)  # type: ignore[arg-type]
    for directory in candidates:
        if all((directory / tool).exists() for tool in ("initdb", "pg_ctl", "postgres")):
            return directory
    return None


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _run_as() -> list[str]:
    """The prefix that runs a server program as a user PostgreSQL accepts."""
    if os.geteuid() != 0:
        return []
    for name in ("postgres", "nobody"):
        try:
            pwd.getpwnam(name)
        except KeyError:
            continue
        return ["runuser", "-u", name, "--"]
    raise ServerUnavailable("running as root, and there is no postgres or nobody user to run as")


def _give(path: Path) -> None:
    """Hand `path` to the user the server runs as (as root)."""
    prefix = _run_as()
    if prefix:
        entry = pwd.getpwnam(prefix[2])
        os.chown(path, entry.pw_uid, entry.pw_gid)


class PgServer:
    """One server in `directory` (made if missing; removed by `stop`)."""

    def __init__(
        self, directory: Path, *, fast: bool = False, options: tuple[str, ...] = ()
    ) -> None:
        self.directory = Path(directory)
        self.fast = fast
        self.extra = options  # more `-c name=value` settings (a benchmark's statistics)
        self.options: list[str] = []  # what the server was started with
        self.bindir = find_bindir()
        self.data = self.directory / "data"
        self.url = ""
        self.watchdog: subprocess.Popen[bytes] | None = None
        self._owner_end: int | None = None  # the pipe's write end: EOF to the watchdog

    def _tool(self, name: str, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        assert self.bindir is not None
        return subprocess.run(
            [*_run_as(), str(self.bindir / name), *args],
            capture_output=True,
            text=True,
            check=check,
            timeout=120,
        )

    def start(self, *, die_with: int | None = None, owned: bool = True) -> str:
        """initdb, start, create the test database; the URL to reach it (with its password).

        A watchdog stops the server when this process ends (`owned`) or when the
        process `die_with` does, whatever ends it; with neither, it runs until stopped."""
        if self.bindir is None:
            raise ServerUnavailable(
                "no PostgreSQL server programs (initdb, pg_ctl, postgres) on this machine: "
                "install Debian's `postgresql` package"
            )
        self.directory.mkdir(parents=True, exist_ok=True)
        os.chmod(self.directory, 0o755)  # the server's user walks into it
        _give(self.directory)
        password = secrets.token_hex(16)
        pwfile = self.directory / "pw"
        pwfile.write_text(password + "\n")
        _give(pwfile)
        try:
            self._tool(
                "initdb",
                "-D",
                str(self.data),
                "-U",
                USER,
                "--pwfile",
                str(pwfile),
                "--auth-local=trust",
                "--auth-host=scram-sha-256",
                "-E",
                "UTF8",
                "--locale=C",
                "--no-sync",
            )
        except subprocess.CalledProcessError as exc:
            raise ServerUnavailable(f"initdb failed: {exc.stderr.strip()}") from None
        finally:
            pwfile.unlink()
        port = _free_port()
        options = [
            "-c listen_addresses=127.0.0.1",
            f"-c port={port}",
            f"-c unix_socket_directories={self.directory}",
            "-c max_connections=300",
            "-c shared_buffers=64MB",
        ]
        # Before the server starts: from here on, whatever kills this process, the
        # watchdog sees its pipe close and stops what there is.
        if owned or die_with is not None:
            self._watch(die_with, owned)
        if self.fast:
            options += ["-c fsync=off", "-c synchronous_commit=off", "-c full_page_writes=off"]
        options += list(self.extra)
        self.options = options
        started = self._tool(
            "pg_ctl",
            "start",
            "-D",
            str(self.data),
            "-w",
            "-t",
            "60",
            "-l",
            str(self.directory / "server.log"),
            "-o",
            " ".join(options),
            check=False,
        )
        if started.returncode != 0:
            log = (self.directory / "server.log").read_text(errors="replace")[-2000:]
            raise ServerUnavailable(f"the server did not start: {started.stderr.strip()}\n{log}")
        self.url = f"postgresql://{USER}:{password}@127.0.0.1:{port}/{DATABASE}"
        self._createdb(port)
        (self.directory / URL_FILE).write_text(self.url)
        os.chmod(self.directory / URL_FILE, 0o600)
        return self.url

    def restart_after(self, seconds: float) -> None:
        """Stop the server as an administrator would (fast: connections cut), wait, start it
        again with the same settings: what a team's clients live through in a failover."""
        self._tool("pg_ctl", "stop", "-D", str(self.data), "-m", "fast", "-w")
        time.sleep(seconds)
        self._tool(
            "pg_ctl",
            "start",
            "-D",
            str(self.data),
            "-w",
            "-t",
            "60",
            "-l",
            str(self.directory / "server.log"),
            "-o",
            " ".join(self.options),
        )

    def _createdb(self, port: int) -> None:
        import psycopg

        admin = self.url.rsplit("/", 1)[0] + "/postgres"
        deadline = time.monotonic() + 30
        while True:
            try:
                with psycopg.connect(admin, autocommit=True) as conn:
                    conn.execute(f"CREATE DATABASE {DATABASE}")
                return
            except psycopg.OperationalError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.1)

    def _watch(self, die_with: int | None, owned: bool) -> None:
        command = [sys.executable, os.path.abspath(__file__), "watch", str(self.directory)]
        if die_with is not None:
            command += ["--die-with", str(die_with)]
        read_end = subprocess.DEVNULL
        if owned:
            command.append("--owned")
            read_end, self._owner_end = os.pipe()  # not inheritable: only this process holds it
        try:
            self.watchdog = subprocess.Popen(
                command,
                stdin=read_end,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                start_new_session=True,  # the terminal's signals go to its owner, not to it
            )
        finally:
            if owned:
                os.close(read_end)

    def stop(self) -> None:
        """Stop the server at once and remove its directory (whatever state it is in)."""
        if self.bindir is not None and (self.data / "postmaster.pid").exists():
            self._tool("pg_ctl", "stop", "-D", str(self.data), "-m", "immediate", "-w", check=False)
        shutil.rmtree(self.directory, ignore_errors=True)
        if self._owner_end is not None:
            os.close(self._owner_end)  # the watchdog reads EOF, finds nothing, and ends
            self._owner_end = None
        if self.watchdog is not None:
            try:
                self.watchdog.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.watchdog.kill()
            self.watchdog = None


def _alive(pid: int) -> bool:
    """Whether `pid` still runs (a zombie, dead but not yet reaped, does not)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return True  # no /proc: kill(0) is all there is
    return stat.rsplit(")", 1)[1].split()[0] not in ("Z", "X")


def watch(directory: Path, die_with: int | None, owned: bool) -> None:
    """The watchdog: wait until stdin reads EOF (`owned`: its owner closed the pipe
    or died) or `die_with` is gone, then stop the server in `directory`."""
    while True:
        readable, _, _ = select.select([0] if owned else [], [], [], WATCH_POLL_S)
        if readable and not os.read(0, 512):
            break
        if die_with is not None and not _alive(die_with):
            break
    PgServer(directory).stop()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("action", choices=["find", "start", "stop", "watch"])
    parser.add_argument("directory", type=Path, nargs="?")
    parser.add_argument("--fast", action="store_true", help="fsync off (tests only)")
    parser.add_argument(
        "--die-with", type=int, metavar="PID", help="stop the server when PID is gone"
    )
    parser.add_argument("--owned", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.action == "find":
        found = find_bindir()
        print(found or "no PostgreSQL server programs (initdb, pg_ctl, postgres) found")
        return 0 if found else 1
    if args.directory is None:
        parser.error(f"{args.action} needs the server's directory")
    if args.action == "watch":
        watch(args.directory, args.die_with, args.owned)
        return 0
    server = PgServer(args.directory, fast=args.fast)
    if args.action == "stop":
        server.stop()
        return 0
    # This command ends at once: only `--die-with` gives the server a watchdog.
    try:
        url = server.start(die_with=args.die_with, owned=False)
    except ServerUnavailable as exc:
        print(f"pg_server: {exc}", file=sys.stderr)
        server.stop()
        return 1
    print(f"export RUN_REPL_TEST_PG_URL={url}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
