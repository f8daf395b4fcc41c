"""Framed messages between the parent and a worker: a length, a kind, a payload.

Imported by the parent as part of the package and by the worker as a plain
module (the worker imports nothing else of run_repl, to start fast).
"""

from __future__ import annotations

import struct

# The guest runtime is evaluated this many lines down, so its stack frames are
# told from the snippet's by line number alone.
PRELUDE_LINE_BASE = 300_000  # so a snippet has at most PRELUDE_LINE_BASE - 1 lines

HEADER = struct.Struct("<IB")
SETTLE = struct.Struct("<I?cd")  # call id, ok, wire mode, guest clock (ms since start)
CALL = struct.Struct("<IH")  # call id, length of the path

# parent -> worker
RUN = ord("R")
SETTLE_CALL = ord("S")
CALL_INTERRUPTED = ord("N")  # a call that will not be answered in this run
# worker -> parent
READY = ord("Y")
HOST_CALL = ord("C")
LOG_BATCH = ord("G")  # a JSON array of [level index, JSON text of the line]
IDLE = ord("I")  # nothing left to run, and no call the parent may still answer
VALUE_CHUNK = ord("V")  # a JSON array of items of a large value, before DONE
DONE = ord("D")
FAIL = ord("F")
INTERNAL = ord("X")

LOG_LEVELS = ("log", "info", "warn", "error", "debug")


def frame(kind: int, payload: bytes) -> bytes:
    return HEADER.pack(len(payload), kind) + payload


class FrameReader:
    """Splits a byte stream into (kind, payload) frames."""

    def __init__(self) -> None:
        self._buf = bytearray()

    def feed(self, data: bytes) -> list[tuple[int, bytes]]:
        self._buf += data
        out: list[tuple[int, bytes]] = []
        buf = self._buf
        pos = 0
        size = HEADER.size
        while len(buf) - pos >= size:
            length, kind = HEADER.unpack_from(buf, pos)
            end = pos + size + length
            if len(buf) < end:
                break
            out.append((kind, bytes(buf[pos + size : end])))
            pos = end
        if pos:
            del buf[:pos]
        return out
