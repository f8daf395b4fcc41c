"""The parent's end of one worker's pipes.

Writes never block the event loop (what the pipe cannot take waits in an
outbox); reads are bounded, so a flood of log frames cannot hold the loop;
frames arrive as typed messages. Answers to host calls made in one turn of
the loop can be sent together, and after a lone answer the channel polls
briefly for the guest's next message: it usually comes within tens of
microseconds, and a wake-up through the event loop costs more.
"""

from __future__ import annotations

import asyncio
import os
import time
from collections.abc import Callable

from . import frames
from .worker_pool import WorkerProcess

READ_CHUNK = 8 * 1024  # a few milliseconds of frames: the event loop gets a turn between reads
SPIN_SECONDS = 0.0001


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
        self.spinning = False
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
        if not self.batch:
            self.loop.call_soon(self._send_batch)
        self.batch.append(data)

    @property
    def batching(self) -> bool:
        return bool(self.batch)

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

    def read_once(self) -> bool:
        """Read and hand on what the worker sent; False when nothing was there."""
        worker = self.worker
        if worker is None:
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
        for kind, payload in self.reader.feed(data):
            try:
                self.on_message(frames.decode(kind, payload))
            except Exception as exc:  # a bad frame (or a bug) must end the run, never hang it
                self.on_garbled(exc)
                return True
            if self.worker is not worker:
                return True  # the run ended on this message
        return True

    def spin(self, seconds: float = SPIN_SECONDS) -> None:
        """Poll for the worker's next message for a moment instead of sleeping."""
        worker = self.worker
        if worker is None or self.spinning:
            return
        self.spinning = True
        try:
            until = time.perf_counter() + seconds
            while time.perf_counter() < until and self.worker is worker:
                if self.read_once():
                    return
                os.sched_yield()  # on a busy machine, let the worker have this core
        finally:
            self.spinning = False

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
