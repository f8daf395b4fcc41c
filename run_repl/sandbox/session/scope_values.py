"""Values a run exposes to its snippet as globals (`run(..., values={...})`).

Plain data (the same mapping as host results: dates, maps, bytes...) is
copied in and frozen: the snippet reads `user.name`, never a live object of
the host's. Names are checked at the call, so a clash is the caller's error
to fix, not a surprise inside the snippet.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from typing import Any

from ..errors import CodecError, HostResultTooLarge, ValuesError
from ..wire import codec
from .host_functions import IDENTIFIER, JS_RESERVED, RESERVED_GLOBALS, special_name_why


def encode_values(
    values: Mapping[str, Any] | None, namespaces: Mapping[str, Any], max_bytes: int
) -> str | None:
    """The wire text of `values`, checked; raises ValuesError naming the entry."""
    if values is None:
        return None
    if not isinstance(values, Mapping):
        raise ValuesError(f"values must be a dict of name -> data, not {type(values).__name__}")
    for name in values:
        if not isinstance(name, str) or not IDENTIFIER.match(name):
            raise ValuesError(
                f"values: {name!r} is not a JavaScript identifier; use letters, digits, _ and $."
            )
        why = special_name_why(name)
        if why is not None:
            raise ValuesError(f"values: {name!r} cannot name a global value: {why}.")
        if name in JS_RESERVED or name in RESERVED_GLOBALS:
            raise ValuesError(
                f"values: {name!r} is a JavaScript reserved word or one of the sandbox's own "
                "globals; choose another name."
            )
        if name in namespaces:
            raise ValuesError(
                f"values: {name!r} is also a host namespace; give the value another name."
            )
    try:
        return codec.encode(dict(values), max_bytes=max_bytes)
    except HostResultTooLarge:
        raise ValuesError(
            f"values are over max_values_bytes ({max_bytes:,} bytes as JSON): pass less, or a "
            "host function the snippet calls for the rest."
        ) from None
    except CodecError as exc:
        raise ValuesError(
            f"values: {exc.what} at {exc.path.replace('$', 'values', 1)} cannot be "
            "copied into the sandbox; pass data (JSON values, dates, maps, sets, "
            "bytes)."
        ) from None


def values_digest(wire: str | None) -> str | None:
    """What a continuation binds: a resume must see the same values."""
    if wire is None:
        return None
    return hashlib.sha256(wire.encode("utf-8", "surrogatepass")).hexdigest()
