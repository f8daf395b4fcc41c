"""The OS-level walls around a worker, behind QuickJS's own (defence in depth).

QuickJS keeps a snippet inside the language; these layers keep a worker whose
QuickJS was broken by a memory-safety bug inside the process: it could not
read the continuation secret or the store, reach the network, start a
program, or touch another process. Each layer is applied where the platform
has it; `Confinement.layers` says which are active, and the run's `stats`
carry that list.

In order, in the worker (a child forked from the template, or a spawned
worker), before any guest code; all but the last while it waits for its job:

    fds           every inherited descriptor closed but the run's two pipes
    env           the environment emptied
    no_new_privs  PR_SET_NO_NEW_PRIVS: nothing can gain privileges again
    capabilities  every capability dropped (matters when run as root)
    landlock      no file, directory or TCP port may be opened or used, no
                  signal sent outside the worker (Linux 5.13+, by ABI)
    seccomp       an allow-list of the few system calls a run needs (no open,
                  socket, connect, execve, fork or clone of a process (threads
                  only), ptrace, kill, executable memory, no resource limit of
                  another process); anything else fails with EPERM
    rlimits       memory, CPU time, file size, open files, processes: set with
                  the job (they depend on it), soft and hard alike, so they can
                  only go lower

Only the standard library (and, where installed, the `pyseccomp` binding over
the system's libseccomp), so the template process can load it without the
package. The seccomp program is compiled once, in a short-lived child of the
template (libseccomp never loads in the template itself), and loaded by each
worker with one system call.
"""

from __future__ import annotations

import _thread
import ctypes
import errno
import fcntl
import mmap
import os
import resource
import socket
import struct
import sys
from typing import Any

__all__ = ["Confinement", "apply_rlimits"]

# Order matters: what needs a later-forbidden system call comes first.
LAYERS = ("fds", "env", "no_new_privs", "capabilities", "landlock", "seccomp", "rlimits")

# prctl(2) and friends (Linux)
_PR_SET_PDEATHSIG = 1
_PR_SET_NAME = 15
_PR_SET_NO_NEW_PRIVS = 38
_PR_CAP_AMBIENT = 47
_PR_CAP_AMBIENT_CLEAR_ALL = 4
_LINUX_CAPABILITY_VERSION_3 = 0x20080522
_SECCOMP_SET_MODE_FILTER = 1
_SECCOMP_FILTER_FLAG_TSYNC = 1

# Landlock (the same syscall numbers on every architecture)
_SYS_LANDLOCK_CREATE_RULESET = 444
_SYS_LANDLOCK_RESTRICT_SELF = 446
_LANDLOCK_CREATE_RULESET_VERSION = 1
# Filesystem rights by ABI: 1 has bits 0-12, 2 adds REFER, 3 TRUNCATE, 5 IOCTL_DEV.
_FS_RIGHTS_BY_ABI = {1: (1 << 13) - 1, 2: (1 << 14) - 1, 3: (1 << 15) - 1, 5: (1 << 16) - 1}
_NET_BIND_CONNECT_TCP = 0b11  # ABI 4
_SCOPE_ABSTRACT_UNIX_AND_SIGNAL = 0b11  # ABI 6

# What a worker needs from the time it waits for its job: reading and writing
# its pipes, memory, waiting, the clock, and exiting (and, below, its own
# resource limits, set with the job). Everything else fails with EPERM.
_ALLOWED_SYSCALLS = (
    "read",
    "write",
    "readv",
    "writev",
    "close",
    "lseek",
    "pread64",
    "fstat",
    "newfstatat",
    "fcntl",
    "brk",
    "munmap",
    "mremap",
    "madvise",
    "futex",
    "sched_yield",
    "select",
    "pselect6",
    "poll",
    "ppoll",
    "clock_gettime",
    "clock_getres",
    "gettimeofday",
    "nanosleep",
    "clock_nanosleep",
    "getpid",
    "getppid",
    "gettid",
    "getrusage",
    "getrandom",
    "rt_sigreturn",
    "rt_sigprocmask",
    "sigaltstack",
    "restart_syscall",
    "rseq",  # what glibc does when a thread starts: harmless
    "set_robust_list",
    "exit",
    "exit_group",
)
_PROT_EXEC = 0x4
_CLONE_THREAD = 0x10000


def _libc() -> Any:
    return ctypes.CDLL(None, use_errno=True)


class _SockFprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]


class _CapHeader(ctypes.Structure):
    _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]


class _CapData(ctypes.Structure):
    _fields_ = [
        ("effective", ctypes.c_uint32),
        ("permitted", ctypes.c_uint32),
        ("inheritable", ctypes.c_uint32),
    ]


class _SeccompCompile:
    """The allow-list being compiled to BPF in a child process, so that
    libseccomp and its binding never load in this one: in the template their
    imports took ~14 ms of its start, and their memory mappings (78 in a bare
    interpreter) made every fork and exit of a worker dearer (measured: fork +
    exit + wait 480 -> 415 us without them and tree-sitter-typescript's package
    imports). The template goes on loading QuickJS meanwhile; `result()` waits
    for the program."""

    def __init__(self) -> None:
        self.done = False
        self.program: tuple[bytes, int] | None = None
        self.read_fd = -1
        self.pid = 0
        if not sys.platform.startswith("linux"):
            self.done = True
            return
        if _thread._count():  # threads here: forking is unsafe, compile in place
            self.program, self.done = seccomp_program(), True
            return
        read_fd, write_fd = os.pipe()
        try:
            pid = os.fork()
        except OSError:  # out of processes, say: compile in place
            os.close(read_fd)
            os.close(write_fd)
            self.program, self.done = seccomp_program(), True
            return
        if pid == 0:
            try:
                os.close(read_fd)
                compiled = seccomp_program()
                if compiled is not None:
                    data = struct.pack("<i", compiled[1]) + compiled[0]
                    while data:
                        data = data[os.write(write_fd, data) :]
            finally:
                os._exit(0)
        os.close(write_fd)
        self.read_fd, self.pid = read_fd, pid

    def result(self) -> tuple[bytes, int] | None:
        if self.done:
            return self.program
        self.done = True
        data = b""
        try:
            while chunk := os.read(self.read_fd, 1 << 16):
                data += chunk
        finally:
            os.close(self.read_fd)
            try:
                os.waitpid(self.pid, 0)
            except ChildProcessError:
                pass  # reaped by someone else's SIGCHLD handler: it had finished
        if len(data) > 4:
            self.program = data[4:], struct.unpack_from("<i", data)[0]
        return self.program


def seccomp_program() -> tuple[bytes, int] | None:
    """The allow-list compiled to a BPF program, and the seccomp(2) syscall
    number: None where libseccomp or its binding is missing."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        import pyseccomp as sc
    except (ImportError, OSError, RuntimeError):
        return None
    try:
        arch = sc.system_arch()
        seccomp_nr = sc.resolve_syscall(arch, "seccomp")
        filt = sc.SyscallFilter(sc.ERRNO(1))  # EPERM
        for name in _ALLOWED_SYSCALLS:
            try:
                filt.add_rule(sc.ALLOW, name)
            except (OSError, ValueError, RuntimeError):
                pass  # a call this architecture does not have
        # Memory, but never executable memory: no shellcode, even with a bug.
        for name in ("mmap", "mprotect"):
            filt.add_rule(sc.ALLOW, name, sc.Arg(2, sc.MASKED_EQ, _PROT_EXEC, 0))
        # Threads (the worker's flusher may start after the walls), never processes:
        # clone only with CLONE_THREAD; clone3 (whose flags seccomp cannot see)
        # says ENOSYS, so glibc falls back to clone.
        filt.add_rule(sc.ALLOW, "clone", sc.Arg(0, sc.MASKED_EQ, _CLONE_THREAD, _CLONE_THREAD))
        # The job's rlimits come after the allow-list: its own limits only (pid 0),
        # which it sets soft and hard alike, so from then on they can only go lower.
        filt.add_rule(sc.ALLOW, "prlimit64", sc.Arg(0, sc.EQ, 0))
        try:
            filt.add_rule(sc.ERRNO(errno.ENOSYS), "clone3")
        except (OSError, ValueError, RuntimeError):
            pass
        read_fd, write_fd = os.pipe()
        try:
            with os.fdopen(write_fd, "wb") as out:
                filt.export_bpf(out)
            program = b""
            while chunk := os.read(read_fd, 1 << 16):
                program += chunk
        finally:
            os.close(read_fd)
    except Exception:
        return None
    if seccomp_nr < 0 or not program or len(program) % 8:
        return None
    return program, seccomp_nr


def landlock_abi() -> int:
    """The kernel's Landlock ABI version, 0 where it has none."""
    if not sys.platform.startswith("linux"):
        return 0
    try:
        libc = _libc()
        abi = libc.syscall(
            _SYS_LANDLOCK_CREATE_RULESET, None, ctypes.c_size_t(0), _LANDLOCK_CREATE_RULESET_VERSION
        )
    except (OSError, AttributeError):
        return 0
    return max(int(abi), 0)


class Confinement:
    """What this machine offers, probed once (in the template); then applied in
    each worker. `layers` lists those applied so far in this process."""

    def __init__(self, skip: frozenset[str] = frozenset()) -> None:
        self.skip = skip  # layers not to apply (tests: a machine without them)
        self.linux = sys.platform.startswith("linux")
        self.libc: Any = _libc() if self.linux else None
        self._compiling = None if "seccomp" in skip else _SeccompCompile()
        self.seccomp_nr = -1
        self._bpf: Any = None
        self._fprog: Any = None
        self.landlock = 0 if "landlock" in skip else landlock_abi()
        self.layers: list[str] = []
        # What each worker passes to the kernel, made once here (in the template):
        # in a forked child, building ctypes objects and types costs page copies.
        self._cap_header = _CapHeader(_LINUX_CAPABILITY_VERSION_3, 0)
        self._cap_data = (_CapData * 2)()
        self._landlock_attr = _landlock_attr(self.landlock)
        if self.libc is not None:
            for name in ("prctl", "capset", "syscall"):
                getattr(self.libc, name)  # ctypes looks each up once, then keeps it

    def finish(self) -> None:
        """Wait for the seccomp program (compiled while the caller loaded the rest):
        before the first fork of a worker and before `available`."""
        compiling, self._compiling = self._compiling, None
        program = compiling.result() if compiling is not None else None
        if program:
            self.seccomp_nr = program[1]
            # Kept alive for the life of the process: the kernel copies it when it loads.
            self._bpf = ctypes.create_string_buffer(program[0], len(program[0]))
            self._fprog = _SockFprog(len(program[0]) // 8, ctypes.addressof(self._bpf))

    def available(self) -> list[str]:
        """The layers this machine can apply."""
        self.finish()
        out = ["fds", "env", "rlimits"]
        if self.linux:
            out += ["no_new_privs", "capabilities"]
        if self.landlock:
            out.append("landlock")
        if self._fprog is not None:
            out.append("seccomp")
        return [layer for layer in LAYERS if layer in out]

    # ------------------------------------------------------------ before the job
    def name_process(self, name: str) -> None:
        """What `ps` and `top` show for this process (Linux: 15 bytes at most)."""
        if self.libc is not None:
            self.libc.prctl(_PR_SET_NAME, ctypes.c_char_p(name.encode()[:15]), 0, 0, 0)

    def die_with_parent(self, parent_pid: int) -> None:
        """SIGKILL this process when the process that forked it ends (Linux)."""
        if self.libc is not None:
            self.libc.prctl(_PR_SET_PDEATHSIG, 9, 0, 0, 0)
        if os.getppid() != parent_pid:
            os._exit(70)  # the parent is already gone

    def seal(self, keep: dict[int, int]) -> None:
        """Keep only the descriptors in `keep` (target -> current), empty the
        environment, and set no_new_privs, capabilities and Landlock. Runs before
        any thread starts: these apply to the calling thread and what it starts."""
        # Copy what is kept above every target first, so no move clobbers another.
        top = max(keep) + 1
        staged = {target: fcntl.fcntl(fd, fcntl.F_DUPFD, top + 64) for target, fd in keep.items()}
        for target, fd in staged.items():
            os.dup2(fd, target)
        os.closerange(top, _max_fd())
        self.layers = ["fds"]
        os.environ.clear()
        self.layers.append("env")
        if self.libc is None:
            return
        if self.libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == 0:
            self.layers.append("no_new_privs")
        if "capabilities" not in self.skip and self._drop_capabilities():
            self.layers.append("capabilities")
        if "no_new_privs" in self.layers and self._landlock():
            self.layers.append("landlock")

    def _drop_capabilities(self) -> bool:
        libc = self.libc
        libc.prctl(_PR_CAP_AMBIENT, _PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0)
        return bool(libc.capset(ctypes.byref(self._cap_header), self._cap_data) == 0)

    def _landlock(self) -> bool:
        attr = self._landlock_attr
        if attr is None:
            return False
        libc = self.libc
        ruleset = libc.syscall(
            _SYS_LANDLOCK_CREATE_RULESET,
            ctypes.byref(attr),
            ctypes.c_size_t(ctypes.sizeof(attr)),
            0,
        )
        if ruleset < 0:
            return False
        try:
            # No rule is added: every handled access is denied, everywhere.
            return bool(libc.syscall(_SYS_LANDLOCK_RESTRICT_SELF, ruleset, 0) == 0)
        finally:
            os.close(ruleset)

    def wall(self) -> None:
        """The system-call allow-list, for every thread there is and every thread
        started later: once the worker has its pipes set up, before it waits
        for its job (loading it then would cost each run ~0.1 ms)."""
        # A no-op where it is done right: before the walls, which close the pipe to the
        # compiling child (the template before its first fork; a spawned worker).
        self.finish()
        if self._fprog is None or self.libc is None:
            return
        rc = self.libc.syscall(
            self.seccomp_nr,
            _SECCOMP_SET_MODE_FILTER,
            _SECCOMP_FILTER_FLAG_TSYNC,
            ctypes.byref(self._fprog),
        )
        if rc == 0:
            self.layers.append("seccomp")

    # ------------------------------------------------------------ with the job
    def lock(self, memory_bytes: int, timeout_ms: int) -> None:
        """The run's OS limits, which the job sets."""
        if apply_rlimits(memory_bytes, timeout_ms):
            self.layers.append("rlimits")


def _landlock_attr(abi: int) -> Any:
    """The ruleset's attribute for this Landlock ABI: every right it can deny."""
    if abi < 1:
        return None
    fields = [_FS_RIGHTS_BY_ABI[max(k for k in _FS_RIGHTS_BY_ABI if k <= abi)]]
    if abi >= 4:
        fields.append(_NET_BIND_CONNECT_TCP)
    if abi >= 6:
        fields.append(_SCOPE_ABSTRACT_UNIX_AND_SIGNAL)
    return (ctypes.c_uint64 * len(fields))(*fields)


def apply_rlimits(memory_bytes: int, timeout_ms: int) -> bool:
    """Backstops in case the sandbox itself is broken: the parent's kill and
    QuickJS's own memory limit come first."""

    def lower(which: int, value: int) -> bool:
        try:
            _soft, hard = resource.getrlimit(which)
            if hard != resource.RLIM_INFINITY:
                value = min(value, hard)
            resource.setrlimit(which, (value, value))
            return True
        except (ValueError, OSError):
            return False

    ok = lower(resource.RLIMIT_AS, memory_bytes * 2 + (768 << 20))
    ok = lower(resource.RLIMIT_CPU, timeout_ms // 1000 + 5) and ok
    ok = lower(resource.RLIMIT_FSIZE, 0) and ok
    ok = lower(resource.RLIMIT_NOFILE, 16) and ok
    if hasattr(resource, "RLIMIT_NPROC"):
        ok = lower(resource.RLIMIT_NPROC, 0) and ok
    if hasattr(resource, "RLIMIT_CORE"):
        lower(resource.RLIMIT_CORE, 0)
    return ok


def _max_fd() -> int:
    try:
        return max(os.sysconf("SC_OPEN_MAX"), 256)
    except (ValueError, OSError):
        return 65536


# ------------------------------------------------------------------ for tests


def probe_walls(parent_pid: int) -> dict[str, str]:
    """Try, from inside a confined worker, what a broken sandbox would try.

    Test-only: a worker runs this instead of a snippet when its template was
    started with `--probe` (a pool option no snippet can reach). Each entry is
    "allowed", or "denied: ERRNO_NAME". (Its imports are at the top: nothing
    can be imported once the walls are up.)"""

    def attempt(action: Any) -> str:
        try:
            action()
        except OSError as exc:
            return "denied: " + errno.errorcode.get(exc.errno or 0, str(exc.errno))
        return "allowed"

    def write_file() -> None:
        os.close(os.open("/tmp/run-repl-probe", os.O_WRONLY | os.O_CREAT, 0o600))

    def read_file() -> None:
        os.close(os.open("/etc/hostname", os.O_RDONLY))

    def make_socket() -> None:
        socket.socket(socket.AF_INET, socket.SOCK_STREAM).close()

    def unix_socket() -> None:
        socket.socket(socket.AF_UNIX, socket.SOCK_STREAM).close()

    def execute() -> None:
        os.execv("/bin/true", ["true"])

    def fork() -> None:
        pid = os.fork()
        if pid == 0:
            os._exit(0)

    def signal_parent() -> None:
        os.kill(parent_pid, 0)

    def executable_memory() -> None:
        mmap.mmap(-1, 4096, prot=mmap.PROT_READ | mmap.PROT_EXEC).close()

    def limit_parent() -> None:  # even to read another process's limits
        resource.prlimit(parent_pid, resource.RLIMIT_NOFILE)

    def raise_own_limit() -> None:  # (prlimit says EPERM where setrlimit says ValueError)
        resource.prlimit(0, resource.RLIMIT_NOFILE, (1024, 1024))

    def lower_own_limit() -> None:  # what the worker itself does with its job: allowed
        resource.prlimit(0, resource.RLIMIT_CORE, (0, 0))

    def thread() -> None:  # what the worker itself needs: allowed
        done = _thread.allocate_lock()
        done.acquire()
        _thread.start_new_thread(done.release, ())
        done.acquire()

    open_fds = []
    for fd in range(64):
        try:
            fcntl.fcntl(fd, fcntl.F_GETFD)
            open_fds.append(str(fd))
        except OSError:
            pass
    return {
        "open_for_writing": attempt(write_file),
        "open_for_reading": attempt(read_file),
        "tcp_socket": attempt(make_socket),
        "unix_socket": attempt(unix_socket),
        "execve": attempt(execute),
        "fork": attempt(fork),
        "signal_parent": attempt(signal_parent),
        "executable_memory": attempt(executable_memory),
        "limit_parent": attempt(limit_parent),
        "raise_own_limit": attempt(raise_own_limit),
        "lower_own_limit": attempt(lower_own_limit),
        "thread": attempt(thread),
        "open_fds": ",".join(open_fds),
        "environment": ",".join(sorted(os.environ)),
        **{
            f"rlimit_{name}": str(
                resource.getrlimit(getattr(resource, "RLIMIT_" + name.upper()))[0]
            )
            for name in ("as", "cpu", "nofile", "fsize")
        },
    }
