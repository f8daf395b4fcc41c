"""A host for the `run-repl serve` tests: an approved call that says which process ran it.

`launch(name)` appends a line `NAME PID` to `launches` in SERVE_TEST_DIR, so a test
counts how many times an approved call ran and in which process. With `hold-guard`
in that directory, the first process whose resume reaches its guard (the store's
`start_batch`, before any host function runs live) marks `held-guard` with its pid and
waits there: a test kills it at that moment, before the first live call."""

from __future__ import annotations

import os
import time
from pathlib import Path

from run_repl import requires_approval

DIR = Path(os.environ["SERVE_TEST_DIR"])


@requires_approval(message=lambda name: f"Launch {name}?")
def launch(name: str) -> dict[str, object]:
    """Launch something (asks a person first)."""
    with (DIR / "launches").open("a") as f:
        f.write(f"{name} {os.getpid()}\n")
    return {"launched": name, "pid": os.getpid()}


def launches() -> list[tuple[str, int]]:
    path = DIR / "launches"
    if not path.exists():
        return []
    return [(n, int(p)) for n, p in (line.split() for line in path.read_text().splitlines())]


def _hold_the_first_guard() -> None:
    from run_repl.store.approvals.claims import ApprovalClaims

    original = ApprovalClaims.start_batch

    def start_batch(self: ApprovalClaims, claim: object) -> None:
        if (DIR / "hold-guard").exists():
            try:
                fd = os.open(DIR / "held-guard", os.O_CREAT | os.O_EXCL | os.O_WRONLY)
            except FileExistsError:
                pass  # another process was held: this one goes on
            else:
                os.write(fd, str(os.getpid()).encode())
                os.close(fd)
                while True:  # until the test kills this process
                    time.sleep(0.05)
        original(self, claim)  # type: ignore[arg-type]

    ApprovalClaims.start_batch = start_batch  # type: ignore[method-assign]


_hold_the_first_guard()

HOSTS = {"rocket": {"launch": launch}}
