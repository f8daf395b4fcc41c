"""The parent's end of one worker's pipes.

Writes never block the event loop (what the pipe cannot take waits in an
outbox); reads are bounded, so a flood of log frames cannot hold the loop;
frames arrive as typed messages. Answers made while a read is handed on
(host calls that finish at once) and answers made in one turn of the loop are
sent together, and after a lone answer the channel polls briefly for the
guest's next message: it usually comes within tens of microseconds, and a
wake-up through the event loop costs more. A chain of such exchanges gives
the loop back within CHAIN_SECONDS, so other work (a UI, a cancel, other runs)
never waits longer than that.
"""

from __future__ import annotations

import asyncio
import os
import time
from collections.abc import Callable

from ..process import frames
from .pool import WorkerProcess

READ_CHUNK = 8 * 1024  # a few milliseconds of frames: the event loop gets a turn between reads
SPIN_SECONDS = 0.0001
CHAIN_SECONDS = 0.002  # the longest one turn of the loop serves exchanges back to back


class WorkerChannel:
    def __init__(
        self,
        loop: asyncio.AbstractEventLoop,
        worker: WorkerProcess,
        *,
        on_message: Callable[[frames.WorkerMessage], None],
        on_eof: Callable[[WorkerProcess], None],
        on_garbled: Callable[[Exception], None],
    ) -> None:
        self.loop = loop
        self.worker: WorkerProcess | None = worker
        self.on_message = on_message
        self.on_eof = on_eof
        self.on_garbled = on_garbled
        self.reader = frames.FrameReader()
        self.outbox = bytearray()
        self.batch: list[bytes] = []
        self.reading = False  # handing on frames: answers made now go out after the read
        self.frames_left = 0  # while reading: frames after the one being handed on
        self.spin_asked = False
        self.spinning_now = False
        os.set_blocking(worker.read_fd, False)
        os.set_blocking(worker.write_fd, False)
        loop.add_reader(worker.read_fd, self._on_readable)

    @property
    def is_open(self) -> bool:
        return self.worker is not None

    # ------------------------------------------------------------ writing
    def send(self, data: bytes) -> None:
        worker = self.worker
        if worker is None:
            return
        if self.batch:
            self.batch.append(data)  # after the answers already waiting: order is kept
            return
        if self.outbox:
            self.outbox += data
            return
        try:
            n = os.write(worker.write_fd, data)
        except BlockingIOError:
            n = 0
        except OSError:
            return  # the worker is gone; its end is reported by the reader
        if n < len(data):
            self.outbox += data[n:]
            self.loop.add_writer(worker.write_fd, self._on_writable)

    def send_soon(self, data: bytes) -> None:
        """Send at the end of this turn of the loop, with the other answers made in it."""
        if not self.batch and not self.reading:  # a read sends its batch when it ends
            self.loop.call_soon(self._send_batch)
        self.batch.append(data)

    @property
    def batching(self) -> bool:
        """Answers wait to go together: send yours with them (`send_soon`)."""
        return self.reading or bool(self.batch)

    def send_waiting(self) -> None:
        """Send the answers waiting to go together now, unless frames are being
        handed on (then they go when that ends, with whatever else it answers)."""
        if not self.reading:
            self._send_batch()

    def _send_batch(self) -> None:
        batch, self.batch = self.batch, []
        if batch:
            self.send(b"".join(batch))

    def _on_writable(self) -> None:
        worker = self.worker
        if worker is None:
            return
        try:
            n = os.write(worker.write_fd, self.outbox)
        except BlockingIOError:
            return
        except OSError:
            self.outbox.clear()
            self.loop.remove_writer(worker.write_fd)
            return
        del self.outbox[:n]
        if not self.outbox:
            self.loop.remove_writer(worker.write_fd)

    # ------------------------------------------------------------ reading
    def _on_readable(self) -> None:
        self.read_once()
        self._spin_if_asked()

    def read_once(self) -> bool:
        """Read and hand on what the worker sent; False when nothing was there.
        Answers made meanwhile leave together when the frames are handed on."""
        worker = self.worker
        if worker is None or self.reading:
            return False
        try:
            data = os.read(worker.read_fd, READ_CHUNK)
        except BlockingIOError:
            return False
        except OSError:
            data = b""
        if not data:
            self.on_eof(worker)
            return True
        self.reading = True
        try:
            received = self.reader.feed(data)
            self.frames_left = len(received)
            for kind, payload in received:
                self.frames_left -= 1  # the frames after this one, read and not yet handed on
                try:
                    self.on_message(frames.decode(kind, payload))
                except Exception as exc:  # a bad frame (or a bug) must end the run, never hang it
                    self.on_garbled(exc)
                    return True
                if self.worker is not worker:
                    return True  # the run ended on this message
        finally:
            self.reading = False
            self.frames_left = 0
            self._send_batch()
        return True

    def spin(self) -> None:
        """After a lone answer: poll for the worker's next message for a moment
        instead of sleeping (now, or once the frames being read are handed on)."""
        self.spin_asked = True
        if not self.reading:
            self._spin_if_asked()

    def _spin_if_asked(self) -> None:
        worker = self.worker
        if self.spinning_now:
            return
        self.spinning_now = True
        self._send_batch()  # what waits to go goes before we wait for the reply
        try:
            chain_until = time.perf_counter() + CHAIN_SECONDS
            while self.spin_asked and self.worker is worker:
                self.spin_asked = False
                now = time.perf_counter()
                until = now + SPIN_SECONDS  # 0: never poll (bench/host_calls.py sets it)
                if now >= chain_until:
                    return  # the loop's turn: the next message wakes the reader
                while time.perf_counter() < until and self.worker is worker:
                    if self.read_once():
                        break  # handed on; an answer to it may ask for another spin
                    os.sched_yield()  # on a busy machine, let the worker have this core
        finally:
            self.spin_asked = False
            self.spinning_now = False

    # ------------------------------------------------------------ the end
    def close(self) -> WorkerProcess | None:
        """Stop reading and writing, and end the worker (killed if still running)."""
        worker, self.worker = self.worker, None
        if worker is None:
            return None
        for fd in (worker.read_fd, worker.write_fd):
            try:
                self.loop.remove_reader(fd) if fd == worker.read_fd else self.loop.remove_writer(fd)
            except (ValueError, OSError):
                pass
        worker.close()
        return worker
