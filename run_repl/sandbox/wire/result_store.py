"""Where stored values live, seen from the engine: an interface and an in-memory store.

The runner keeps every run's value (and logs past the inline ones) by item
under a ref, so `expand` pages through them without running the snippet
again. The engine only knows this interface; the SQLite store of the front
ends (run_repl.store) implements it too, so paging survives a restart.
"""

from __future__ import annotations

import json
import secrets
import threading
import time
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from pydantic import BaseModel

from ..errors import ResultRefNotFound
from .value_window import CHUNK_ITEMS, check_items, load_chunk

MAX_PAGE = 1000


def new_ref() -> str:
    return "res_" + secrets.token_hex(8)


@dataclass
class StoredItems:
    """A value (or a run's logs) kept by item, in chunks of JSON arrays."""

    ref: str
    path: str
    total: int
    chunks: list[str]
    rest: dict[str, Any] | None = None
    chunk_items: int = CHUNK_ITEMS
    kind: str = "value"  # value | logs
    run_id: str | None = None
    created_at: float = field(default_factory=time.time)

    @property
    def size(self) -> int:
        return sum(len(c) for c in self.chunks) + (len(json.dumps(self.rest)) if self.rest else 0)


class Page(BaseModel):
    """One page of a stored value, by item."""

    ref: str
    offset: int
    items: list[Any]
    total: int
    has_more: bool
    path: str
    rest: dict[str, Any] | None = None


@runtime_checkable
class ResultStore(Protocol):
    def put_items(self, stored: StoredItems) -> None: ...

    def get_items(self, ref: str) -> StoredItems | None:
        """Metadata and chunks of a ref (chunks may be loaded lazily)."""

    def get_chunks(
        self, ref: str, first: int, last: int
    ) -> tuple[StoredItems, list[str]] | None: ...


def check_page_args(offset: int, limit: int) -> None:
    if not isinstance(offset, int) or isinstance(offset, bool) or offset < 0:
        raise ValueError(f"offset must be an int >= 0, not {offset!r}")
    if not isinstance(limit, int) or isinstance(limit, bool) or not 1 <= limit <= MAX_PAGE:
        raise ValueError(f"limit must be an int from 1 to {MAX_PAGE}, not {limit!r}")


def page_of(store: ResultStore, ref: str, offset: int = 0, limit: int = 100) -> Page:
    """Items [offset, offset + limit) of a stored ref, decoding only their chunks."""
    check_page_args(offset, limit)
    found = store.get_chunks(ref, offset // CHUNK_ITEMS, (offset + limit - 1) // CHUNK_ITEMS)
    if found is None:
        raise ResultRefNotFound(ref)
    meta, chunks = found
    items: list[Any] = []
    if offset < meta.total:
        first_chunk = offset // meta.chunk_items
        start = offset - first_chunk * meta.chunk_items
        for n, text in enumerate(chunks, first_chunk):
            items.extend(load_chunk(text, meta.path, n * meta.chunk_items))
        items = items[start : start + limit]
        check_items(items, meta.path, offset)
    end = offset + len(items)
    return Page(
        ref=ref,
        offset=offset,
        items=items,
        total=meta.total,
        has_more=end < meta.total,
        path=meta.path,
        rest=meta.rest,
    )


class MemoryResultStore:
    """Stored values in this process, least recently used out first."""

    def __init__(self, max_bytes: int = 256 << 20, max_age_s: float = 24 * 3600) -> None:
        self.max_bytes = max_bytes
        self.max_age_s = max_age_s
        self._items: OrderedDict[str, StoredItems] = OrderedDict()
        self._bytes = 0
        self._lock = threading.Lock()

    def put_items(self, stored: StoredItems) -> None:
        size = stored.size
        with self._lock:
            old = self._items.pop(stored.ref, None)
            if old is not None:
                self._bytes -= old.size
            self._items[stored.ref] = stored
            self._bytes += size
            while self._bytes > self.max_bytes and len(self._items) > 1:
                _, evicted = self._items.popitem(last=False)
                self._bytes -= evicted.size

    def get_items(self, ref: str) -> StoredItems | None:
        with self._lock:
            stored = self._items.get(ref)
            if stored is None:
                return None
            if time.time() - stored.created_at > self.max_age_s:
                del self._items[ref]
                self._bytes -= stored.size
                return None
            self._items.move_to_end(ref)
            return stored

    def get_chunks(self, ref: str, first: int, last: int) -> tuple[StoredItems, list[str]] | None:
        stored = self.get_items(ref)
        if stored is None:
            return None
        return stored, stored.chunks[first : last + 1]
