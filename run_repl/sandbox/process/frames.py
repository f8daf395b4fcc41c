"""The protocol between the parent and a worker: framed messages, each a
length, a kind and a payload, and one function to write and one type to read
each message.

Imported by the parent as part of the package and by the worker as a plain
module (the worker imports nothing else of run_repl, to start fast), so only
the standard library here.

    parent -> worker   RUN (the job, JSON), SETTLE_CALL (a call's answer),
                       CALL_INTERRUPTED (a call that gets no answer in this run)
    worker -> parent   READY, PREPARED (the code it made of the source), HOST_CALL,
                       LOG_BATCH, IDLE, VALUE_CHUNK, then DONE or FAIL (or
                       INTERNAL: the worker itself could not start)
"""

from __future__ import annotations

import json
import struct
from dataclasses import dataclass
from enum import IntEnum
from typing import Any

# The guest runtime is evaluated this many lines down, so its stack frames are
# told from the snippet's by line number alone.
PRELUDE_LINE_BASE = 300_000  # so a snippet has at most PRELUDE_LINE_BASE - 1 lines

HEADER = struct.Struct("<IB")  # payload length, kind
SETTLE = struct.Struct("<I?cd")  # call id, ok, wire mode, guest clock (ms since start)
CALL = struct.Struct("<IH")  # call id, length of the path

LOG_LEVELS = ("log", "info", "warn", "error", "debug")


class Kind(IntEnum):
    # parent -> worker
    RUN = ord("R")
    SETTLE_CALL = ord("S")
    CALL_INTERRUPTED = ord("N")
    # worker -> parent
    READY = ord("Y")
    PREPARED = ord("P")  # the JavaScript the worker evaluates, and how to map positions back
    HOST_CALL = ord("C")
    REFUSED_CALL = ord("U")  # a call the guest refused itself (never sent, never answered)
    LOG_BATCH = ord("G")  # a JSON array of [level index, text]
    IDLE = ord("I")  # nothing left to run, and no call the parent may still answer
    VALUE_CHUNK = ord("V")  # a JSON array of items of a large value, before DONE
    DONE = ord("D")
    FAIL = ord("F")
    INTERNAL = ord("X")


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


def _text(data: bytes) -> str:
    return data.decode("utf-8", "surrogatepass")


# ------------------------------------------------------------------ parent -> worker


def run_frame(job: dict[str, Any]) -> bytes:
    return frame(Kind.RUN, json.dumps(job).encode())


def settle_frame(seq: int, ok: bool, mode: str, body: str, clock_ms: float) -> bytes:
    header = SETTLE.pack(seq, ok, mode.encode(), clock_ms)
    return frame(Kind.SETTLE_CALL, header + body.encode("utf-8", "surrogatepass"))


def interrupted_frame(seq: int) -> bytes:
    return frame(Kind.CALL_INTERRUPTED, CALL.pack(seq, 0))


# ------------------------------------------------------------------ worker -> parent


def prepared_frame(fields: dict[str, int], code: str) -> bytes:
    body = json.dumps(fields).encode() + b"\n" + code.encode("utf-8", "surrogatepass")
    return frame(Kind.PREPARED, body)


def host_call_frame(seq: int, path: str, mode: str, text: str) -> bytes:
    encoded = path.encode()
    body = CALL.pack(seq, len(encoded)) + encoded + (mode + text).encode("utf-8", "surrogatepass")
    return frame(Kind.HOST_CALL, body)


def refused_call_frame(seq: int, path: str, error_json: str) -> bytes:
    encoded = path.encode("utf-8", "surrogatepass")
    body = CALL.pack(seq, len(encoded)) + encoded + error_json.encode("utf-8", "surrogatepass")
    return frame(Kind.REFUSED_CALL, body)


@dataclass(frozen=True, slots=True)
class Ready:
    pass


@dataclass(frozen=True, slots=True)
class Prepared:
    fields: dict[str, Any]  # see PreparedSource.from_wire
    code: str


@dataclass(frozen=True, slots=True)
class HostCall:
    seq: int
    path: str
    wire: str  # mode + JSON text of the arguments
    nbytes: int = 0  # of the JSON text, as UTF-8 (what the argument limits count)


@dataclass(frozen=True, slots=True)
class RefusedCall:
    seq: int
    path: str
    code: str
    message: str


@dataclass(frozen=True, slots=True)
class LogBatch:
    lines: list[tuple[int, str]]  # level index, text


@dataclass(frozen=True, slots=True)
class Idle:
    stats: dict[str, Any]


@dataclass(frozen=True, slots=True)
class ValueChunk:
    text: str


@dataclass(frozen=True, slots=True)
class Done:
    report: dict[str, Any]
    value_text: str


@dataclass(frozen=True, slots=True)
class Fail:
    report: dict[str, Any]


@dataclass(frozen=True, slots=True)
class Internal:
    text: str


WorkerMessage = (
    Ready
    | Prepared
    | HostCall
    | RefusedCall
    | LogBatch
    | Idle
    | ValueChunk
    | Done
    | Fail
    | Internal
)


def decode(kind: int, payload: bytes) -> WorkerMessage:
    """A worker's frame as a typed message; raises ValueError for one we cannot read."""
    match kind:
        case Kind.HOST_CALL:
            seq, path_len = CALL.unpack_from(payload)
            start = CALL.size
            return HostCall(
                seq,
                payload[start : start + path_len].decode(),
                _text(payload[start + path_len :]),
                len(payload) - start - path_len - 1,  # less the wire's mode
            )
        case Kind.REFUSED_CALL:
            seq, path_len = CALL.unpack_from(payload)
            start = CALL.size
            error = json.loads(_text(payload[start + path_len :]))
            return RefusedCall(
                seq,
                _text(payload[start : start + path_len]),
                str(error.get("code")),
                str(error.get("message")),
            )
        case Kind.LOG_BATCH:
            return LogBatch([(int(level), str(text)) for level, text in json.loads(_text(payload))])
        case Kind.IDLE:
            return Idle(json.loads(payload) if payload else {})
        case Kind.VALUE_CHUNK:
            return ValueChunk(_text(payload))
        case Kind.DONE:
            head, _, body = payload.partition(b"\n")
            return Done(json.loads(head), _text(body))
        case Kind.FAIL:
            return Fail(json.loads(payload))
        case Kind.READY:
            return Ready()
        case Kind.PREPARED:
            head, _, body = payload.partition(b"\n")
            fields = json.loads(head)
            if not isinstance(fields, dict):
                raise ValueError("a PREPARED frame without its fields")
            return Prepared(fields, _text(body))
        case Kind.INTERNAL:
            return Internal(payload.decode("utf-8", "replace"))
    raise ValueError(f"unknown frame kind {kind}")
