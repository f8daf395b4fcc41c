"""Continuations: the signed token an interrupted run hands back, to resume it later.

The token carries what replay needs (the ledger of finished calls with their
results, the order they were answered in, the seed and the clock) and is
bound to the source, the host manifest, an audience and an optional context.
HMAC-SHA256 over a canonical encoding gives integrity, not secrecy: anyone
holding a token can read the recorded call results in it. Keep tokens where
you would keep those results.

    rrc1.<base64url(zlib(canonical JSON))>.<base64url(HMAC-SHA256)>
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import os
import re
import secrets
import time
import zlib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import ContinuationInvalid, SecretTooShort
from ..wire import codec
from ..wire.nesting import PAYLOAD_DEPTH
from .replay import (
    GUEST_RUNTIME,
    GUEST_RUNTIMES,
    THREE_JOB_AWAIT,
    LedgerEntry,
    PendingInterrupt,
)

PREFIX = "rrc1"
MIN_SECRET_BYTES = 32
MAX_TOKEN_BYTES = 64 << 20
SECRET_FILE = "continuation-secret.key"


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


# Checked by a regex, not character by character in Python: a token may be megabytes,
# and it is read on the event loop (11 MB: the check took 311 ms that way, 12 ms so).
_BASE64URL = re.compile(r"[A-Za-z0-9_-]+")


def _unb64(text: str) -> bytes:
    if not _BASE64URL.fullmatch(text):
        raise ContinuationInvalid("the token is not base64url")
    try:
        raw = base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
    except ValueError as exc:  # binascii.Error: a length no encoder makes
        raise ContinuationInvalid("the token is truncated") from exc
    # Unused low bits of the last character could differ and decode the same:
    # only the one canonical spelling of a token is that token.
    if _b64(raw) != text:
        raise ContinuationInvalid("the token is not in canonical form")
    return raw


def _canonical(value: Any) -> bytes:
    return json.dumps(
        value, sort_keys=True, separators=(",", ":"), ensure_ascii=True, allow_nan=False
    ).encode()


def source_digest(source: str) -> str:
    return hashlib.sha256(source.encode("utf-8", "surrogatepass")).hexdigest()


def token_digest(token: str) -> str:
    return hashlib.sha256(token.encode("ascii", "replace")).hexdigest()


def manifest_digest_of(token: str) -> str | None:
    """The digest of the host functions a token is bound to (`man`), read without
    verifying it (None: not a token this version reads). Where to resume a run is
    chosen by it; the resume itself verifies the token."""
    parts = token.split(".") if isinstance(token, str) else []
    if len(parts) != 3 or parts[0] != PREFIX or len(token) > MAX_TOKEN_BYTES:
        return None
    try:
        body = json.loads(zlib.decompress(_unb64(parts[1]), bufsize=1 << 16))
    except (ContinuationInvalid, zlib.error, ValueError):
        return None
    found = body.get("man") if isinstance(body, dict) else None
    return found if isinstance(found, str) else None


def as_secret(value: bytes | str) -> bytes:
    raw = value.encode() if isinstance(value, str) else bytes(value)
    if len(raw.strip()) < MIN_SECRET_BYTES:
        raise SecretTooShort(
            f"a continuation secret must be at least {MIN_SECRET_BYTES} bytes (got {len(raw.strip())}); "
            "generate one with `python -c 'import secrets; print(secrets.token_hex(32))'`."
        )
    return raw


def load_or_create_secret(data_dir: Path) -> bytes:
    """The secret in the data directory, made once (mode 0600) if it is not there.

    Only the user's own: a directory others can write, or a key file that is a
    symbolic link, another user's, or readable by others, is refused (NotPrivate,
    a PermissionError saying what to fix), never used as the HMAC key."""
    from ...paths import check_private_dir  # the app's files: only when the engine keeps one

    path = data_dir / SECRET_FILE
    try:
        check_private_dir(data_dir)
        return _checked_file_secret(path)
    except FileNotFoundError:
        pass
    data_dir.mkdir(mode=0o700, parents=True, exist_ok=True)
    check_private_dir(data_dir)
    fresh = secrets.token_hex(32).encode()
    tmp = path.with_name(path.name + f".{os.getpid()}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    with os.fdopen(fd, "wb") as fh:
        fh.write(fresh)
    try:
        # Two processes may race to make it: the first one's secret wins.
        os.link(tmp, path)
    except FileExistsError:
        pass
    finally:
        tmp.unlink(missing_ok=True)
    return _checked_file_secret(path)


def _checked_file_secret(path: Path) -> bytes:
    from ...paths import check_private_file, open_private

    # No link, the user's own, writable by no one else; then whether it is a key at all.
    fd = open_private(path, os.O_RDONLY, secret=False)
    with os.fdopen(fd, "rb") as fh:
        raw = fh.read().strip()
        # A blank or short file must never become an empty HMAC key: refuse it, and say how.
        if len(raw) < MIN_SECRET_BYTES:
            raise SecretTooShort(
                f"the continuation secret in {path} is {len(raw)} bytes; at least "
                f"{MIN_SECRET_BYTES} are needed. Delete the file to have a new one made "
                "(approvals signed with the old one can then not be resumed), or write 64 hex "
                "characters into it."
            )
        check_private_file(os.fstat(fh.fileno()), path, secret=True)  # and readable by no one else
    return raw


@dataclass(frozen=True)
class ContinuationState:
    """What a verified token says."""

    logical_run_id: str
    seed: list[int]
    clock_ms: int
    elapsed_ms: float
    entries: list[LedgerEntry]  # with their interrupt payloads decoded
    settle_order: list[int]
    pending: list[str]
    issued_at: float
    expires_at: float
    digest: str  # of the whole token: what a consume-once store remembers
    guest_runtime: int = GUEST_RUNTIME  # see GUEST_RUNTIME


@dataclass(frozen=True, kw_only=True)
class Checkpoint:
    """What a token carries: the run it belongs to (checked again on resume) and
    where it stopped (what the resumed run replays)."""

    source: str
    manifest_digest: str
    context: Mapping[str, Any] | None
    values_digest: str | None = None
    logical_run_id: str
    seed: list[int]
    clock_ms: int
    elapsed_ms: float
    ledger: list[LedgerEntry]
    settle_order: list[int]
    interrupts: list[PendingInterrupt]
    guest_runtime: int = GUEST_RUNTIME


class ContinuationSigner:
    def __init__(
        self,
        secret: bytes,
        verify_secrets: Iterable[bytes] = (),
        audience: str = "run-repl",
        max_age_s: int = 3_600,
    ) -> None:
        self.secret = secret
        self.verify_secrets = [secret, *verify_secrets]
        self.audience = audience
        self.max_age_s = max_age_s

    def sign(self, checkpoint: Checkpoint) -> str:
        c = checkpoint
        now = time.time()
        body = {
            "v": 1,
            # How the run scheduled an awaited host call (replay.GUEST_RUNTIME); a
            # token without it was made when that took three jobs (see verify).
            "rt": c.guest_runtime,
            "aud": self.audience,
            "ctx": dict(c.context) if c.context else None,
            "iat": round(now, 3),
            "exp": round(now + self.max_age_s, 3),
            "src": source_digest(c.source),
            "man": c.manifest_digest,
            "val": c.values_digest,
            "run": c.logical_run_id,
            "seed": c.seed,
            "clock": c.clock_ms,
            "elapsed": round(c.elapsed_ms, 3),
            "order": c.settle_order,
            "calls": [
                {
                    "seq": e.seq,
                    "path": e.path,
                    "args": e.args_digest,
                    "ok": e.ok,
                    "wire": e.wire,
                    "t": round(e.elapsed_ms, 3),
                    "int": e.interruption_id,
                    "payload": _payload_wire(e),
                    "pol": e.by_policy,
                    "h": {str(k): v for k, v in e.handles.items()} or None,
                    "aw": e.args_wire if e.handles else None,
                    "decision": e.decision,
                }
                for e in c.ledger
                if e.ok is not None or e.interruption_id is not None
            ],
            "pending": [i.id for i in c.interrupts],
        }
        data = _b64(zlib.compress(_canonical(body), 6))
        mac = hmac.new(self.secret, f"{PREFIX}.{data}".encode(), hashlib.sha256).digest()
        return f"{PREFIX}.{data}.{_b64(mac)}"

    def verify(
        self,
        token: Any,
        *,
        source: str,
        manifest_digest: str,
        context: Mapping[str, Any] | None,
        values_digest: str | None = None,
    ) -> ContinuationState:
        """What the token says; raises ContinuationInvalid."""
        if not isinstance(token, str) or len(token) > MAX_TOKEN_BYTES:
            raise ContinuationInvalid("the continuation is not a token string")
        parts = token.split(".")
        if len(parts) != 3 or parts[0] != PREFIX:
            raise ContinuationInvalid(
                "the continuation is malformed (truncated or not a run-repl token)"
            )
        mac = _unb64(parts[2])
        signed = f"{parts[0]}.{parts[1]}".encode()
        if not any(
            hmac.compare_digest(mac, hmac.new(key, signed, hashlib.sha256).digest())
            for key in self.verify_secrets
        ):
            raise ContinuationInvalid(
                "the continuation's signature does not match (tampered, or another key)"
            )
        try:
            body = json.loads(zlib.decompress(_unb64(parts[1]), bufsize=1 << 16))
        except (zlib.error, ValueError) as exc:
            raise ContinuationInvalid("the continuation could not be decoded") from exc
        if (
            not isinstance(body, dict)
            or body.get("v") != 1
            or body.get("rt", THREE_JOB_AWAIT) not in GUEST_RUNTIMES
        ):
            raise ContinuationInvalid("the continuation is from another version of run-repl")
        if body.get("aud") != self.audience:
            raise ContinuationInvalid(
                f"the continuation is for audience {body.get('aud')!r}, not {self.audience!r}"
            )
        if time.time() > float(body.get("exp", 0)):
            raise ContinuationInvalid("the continuation has expired")
        if body.get("src") != source_digest(source):
            raise ContinuationInvalid(
                "the continuation is for another source: resume with the same snippet"
            )
        if body.get("man") != manifest_digest:
            raise ContinuationInvalid("the continuation is for another set of host functions")
        if body.get("val") != values_digest:
            raise ContinuationInvalid(
                "the continuation is for a run with other values: resume with the same values"
            )
        if (body.get("ctx") or None) != (dict(context) if context else None):
            raise ContinuationInvalid(
                "the continuation is bound to another context (tenant or user)"
            )
        try:
            entries = [
                LedgerEntry(
                    seq=int(c["seq"]),
                    path=str(c["path"]),
                    args_digest=str(c["args"]),
                    ok=c["ok"],
                    wire=c["wire"],
                    elapsed_ms=float(c["t"]),
                    interruption_id=c["int"],
                    payload=codec.decode(c["payload"], levels=PAYLOAD_DEPTH)
                    if c.get("payload")
                    else None,
                    by_policy=c.get("pol") is True,
                    handles={int(k): str(v) for k, v in (c.get("h") or {}).items()},
                    args_wire=c.get("aw"),
                    decision=c.get("decision"),
                )
                for c in body["calls"]
            ]
            return ContinuationState(
                logical_run_id=str(body["run"]),
                seed=[int(x) for x in body["seed"]],
                clock_ms=int(body["clock"]),
                elapsed_ms=float(body["elapsed"]),
                entries=entries,
                settle_order=[int(s) for s in body["order"]],
                pending=[str(p) for p in body["pending"]],
                issued_at=float(body["iat"]),
                expires_at=float(body["exp"]),
                digest=token_digest(token),
                guest_runtime=int(body.get("rt", THREE_JOB_AWAIT)),
            )
        except (KeyError, TypeError, ValueError) as exc:
            raise ContinuationInvalid("the continuation's contents are incomplete") from exc


def _payload_wire(entry: LedgerEntry) -> str | None:
    """An interrupt's payload travels encoded, so it comes back the same type."""
    if entry.interruption_id is None or entry.payload is None:
        return None
    return codec.encode(entry.payload, levels=PAYLOAD_DEPTH)
