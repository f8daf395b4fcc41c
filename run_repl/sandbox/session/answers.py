"""The guest's answers, in order: live ones wait while a replay still has
recorded answers to give, so a resumed guest sees events in the order it saw
them first; each goes with the guest clock it was (or will be) replayed at."""

from __future__ import annotations

import math
from collections.abc import Callable

from ..process import frames
from ..resume.replay import Answer, LedgerEntry, ReplayCursor
from .channel import WorkerChannel

__all__ = ["AnswerOrder"]


class AnswerOrder:
    """Sends one run's answers on its channel; `running` counts the host calls
    served live (a lone one's answer goes at once)."""

    def __init__(
        self,
        replay: ReplayCursor,
        guest_clock: Callable[[], float],
        running: Callable[[], int],
    ) -> None:
        self.replay = replay
        self.channel: WorkerChannel | None = None  # set once the worker is taken
        self.settle_order: list[int] = []  # the order the calls were answered in
        self.sent = 0
        self._guest_clock = guest_clock
        self._running = running

    def live(self, answer: Answer) -> bool:
        """Send a live call's answer. While a replay still has recorded answers to
        give, live answers wait, so the guest sees the same order. True as for
        `send`."""
        if self.replay.hold(answer):
            return False
        # Whole milliseconds, kept in the ledger exactly as sent: a replay gives the
        # guest this same number, so `Date.now()` after this call reads the same in
        # every round (a fraction would not survive the token's rounding).
        clock = float(math.floor(self._guest_clock()))
        if answer.entry is not None:
            answer.entry.elapsed_ms = clock
            self.settle_order.append(answer.seq)
        return self.send(answer, clock)

    def recorded(self, entry: LedgerEntry) -> bool:
        """Send a call's answer from the record, at the clock it was first given."""
        wire = entry.wire or "Jnull"
        self.settle_order.append(entry.seq)
        return self.send(Answer(entry.seq, bool(entry.ok), wire[0], wire[1:]), entry.elapsed_ms)

    def release(self) -> bool:
        """Once the record is exhausted, the live answers held back go."""
        poll = False
        if self.replay.done:
            for held in self.replay.release_held():
                poll = self.live(held) or poll
        return poll

    def send(self, answer: Answer, clock: float) -> bool:
        """Send an answer; True if the guest waits on it alone, so the caller should
        poll for its next message once done with this call (`poll_next`)."""
        channel = self.channel
        if channel is None or not channel.is_open:
            return False
        data = frames.settle_frame(answer.seq, answer.ok, answer.mode, answer.body, clock)
        self.sent += 1
        lone = self._running() <= 1
        if lone and not channel.frames_left:
            # The guest waits on this answer alone: it goes now (after any waiting
            # to go), while the rest of this turn's bookkeeping is done.
            channel.send(data)
            channel.send_waiting()
        else:
            channel.send_soon(data)  # other answers are coming in this turn: send them together
        return lone and not self.replay.waiting

    def poll_next(self) -> None:
        """Poll briefly for the guest's next message instead of waiting for the loop
        to wake (after a lone answer, once its call's bookkeeping is done)."""
        channel = self.channel
        if channel is not None and channel.is_open:
            channel.spin()
