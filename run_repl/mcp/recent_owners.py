"""Whose the runs this server made lately are: `expand_result` checks a principal's
own value against it before the history, which may not have the run yet (its write
failed and goes on behind) or at all (the history could not be written: a full disk).
The store answers for runs made elsewhere; a run id is made here, never given."""

from __future__ import annotations

import threading
from collections import OrderedDict

KEPT = 4096  # runs remembered; older ones are asked of the store, as any other server's


class RecentOwners:
    def __init__(self, kept: int = KEPT) -> None:
        self.kept = kept
        self._owners: OrderedDict[str, str] = OrderedDict()
        self._lock = threading.Lock()  # kept from a thread (the history write's)

    def keep(self, run_id: str, owner: str) -> None:
        with self._lock:
            self._owners[run_id] = owner
            self._owners.move_to_end(run_id)
            while len(self._owners) > self.kept:
                self._owners.popitem(last=False)

    def of(self, run_id: str) -> str | None:
        with self._lock:
            return self._owners.get(run_id)


__all__ = ["KEPT", "RecentOwners"]
