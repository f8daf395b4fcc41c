"""What a front end's process exit status means, for shells and scripts."""

from __future__ import annotations

from enum import IntEnum


class ExitCode(IntEnum):
    """`run-repl` exit statuses (the line REPL's piped mode uses the same)."""

    OK = 0
    ERROR = 1
    USAGE = 2
    INTERRUPTED = 3
    NOT_SAVED = 4
    VALUE_CUT = 5  # the value on stdout is not whole (the store lost the rest)
    STORE = 6  # the store could not be used: its file or server (stderr says why)
    CANCELLED = 130  # 128 + SIGINT, as shells report Ctrl-C
    BROKEN_PIPE = 141  # 128 + SIGPIPE: the reader went away, as `yes | head` ends

    @classmethod
    def from_status(cls, status: str, *, approvals_saved: bool = True) -> ExitCode:
        """The exit status of a run that ended with `status` (ok, error, interrupted)."""
        if status == "ok":
            return cls.OK
        if status == "interrupted":
            return cls.INTERRUPTED if approvals_saved else cls.NOT_SAVED
        return cls.ERROR

    @property
    def meaning(self) -> str:
        return MEANINGS[self]


MEANINGS = {
    ExitCode.OK: "the run ended ok, or the command did what it was asked",
    ExitCode.ERROR: "the run ended with an error, or the command failed",
    ExitCode.USAGE: "bad usage: a command, option, file or --host that does not work",
    ExitCode.INTERRUPTED: "the run waits for an approval, saved: decide it with `run-repl approvals`",
    ExitCode.NOT_SAVED: "the run waits for an approval that was NOT saved (nobody can approve it later)",
    ExitCode.VALUE_CUT: "the run ended ok, but the value on stdout is cut short (stderr says why)",
    ExitCode.STORE: "the store could not be used (busy, damaged, full, unreachable): stderr says what to do",
    ExitCode.CANCELLED: "cancelled with Ctrl-C",
    ExitCode.BROKEN_PIPE: "the output's reader went away (`| head`): output stopped, quietly",
}


def exit_codes_help() -> str:
    """The table `--help` prints."""
    return "\n".join(f"  {code.value:>3}  {code.meaning}" for code in ExitCode)
