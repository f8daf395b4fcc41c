"""Serving calls on handles, for one run: which function a call on a handle
means, the objects behind handles passed as arguments, and, on resume, making a
handle again from the record when a live call needs it (see handles.py)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterable
from typing import Any

from ..errors import ErrorCode
from ..handles import HandleMismatch, HandleRef, HandleTable, handle_member, split_handle_path
from ..resume.replay import LedgerEntry, handle_maker
from ..wire import codec
from ..wire.nesting import ARGUMENTS_DEPTH
from .host_call import HostCallRunner
from .host_functions import HostFunction, HostManifest, is_async_callable

# How a handle looks in a wire text (the guest writes the tag's NUL as an escape).
HANDLE_TAG = '"\\u0000":"h"'


class HandleProblem(Exception):
    """A call on (or with) a handle that cannot be served."""

    def __init__(self, code: ErrorCode, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


class HandleCalls:
    def __init__(
        self,
        table: HandleTable,
        manifest: HostManifest,
        host_calls: HostCallRunner,
        recorded: Callable[[], Iterable[LedgerEntry]],
    ) -> None:
        self.table = table
        self.manifest = manifest
        self.host_calls = host_calls
        self.recorded = recorded  # the ledger so far, and the replayed one
        self.remaking: dict[int, asyncio.Task[None]] = {}

    async def function(self, hid: int, member_path: str, shown: str) -> HostFunction:
        """The method a call on handle `hid` means, as a host function named `shown`."""
        fn = handle_member(await self.object(hid), member_path)
        if fn is None:
            raise HandleProblem(
                ErrorCode.RUN_UNKNOWN_MEMBER,
                f"The handle {self.table.label(hid)} has no method {member_path}.",
            )
        return HostFunction(
            shown,
            fn,
            is_async_callable(fn),
            getattr(fn, "__run_repl_approval__", None),
            getattr(fn, "__run_repl_cli__", None),
        )

    async def object(self, hid: int) -> Any:
        if hid not in self.table.objects:
            if hid not in self.remaking:
                self.remaking[hid] = asyncio.get_running_loop().create_task(self._remake(hid))
            await asyncio.shield(self.remaking[hid])
        return self.table.objects[hid]

    async def resolve_arguments(self, args: list[Any], wire: str) -> None:
        """Handles passed as arguments become their objects, in place (shared parts
        and cycles stay as they are)."""
        if HANDLE_TAG not in wire:
            return
        seen: set[int] = set()
        stack: list[Any] = [args]
        while stack:
            node = stack.pop()
            if id(node) in seen:
                continue
            seen.add(id(node))
            slots = enumerate(node) if isinstance(node, list) else node.items()
            for key, value in list(slots):
                if isinstance(value, HandleRef):
                    node[key] = await self.object(value.id)
                elif isinstance(value, list | dict):
                    stack.append(value)

    async def _remake(self, hid: int) -> None:
        """On resume, a handle made before the run paused: call again the function
        that made it, and take the handles its result makes as the record's ids."""
        maker = handle_maker(self.recorded(), hid)
        if maker is None or maker.args_wire is None:
            raise HandleProblem(
                ErrorCode.RUN_ARGUMENT_NOT_CLONEABLE, f"handle #{hid} is not from this run"
            )
        on_handle = split_handle_path(maker.path)
        label = self.table.label(hid).split("(…)", 1)[0]
        if on_handle is not None:
            fn = await self.function(*on_handle, label)
        else:
            found = self.manifest.functions.get(maker.path)
            if found is None:
                raise HandleProblem(ErrorCode.RUN_REPLAY_MISMATCH, f"{maker.path}() is gone")
            fn = found
        args = codec.decode(maker.args_wire, levels=ARGUMENTS_DEPTH)
        await self.resolve_arguments(args, maker.args_wire)
        result = await self.host_calls.remake(fn, args)
        self.table.expected = list(maker.handles)
        try:
            made = self.host_calls.encode_result(result, label, self.table)[1]
        except HandleMismatch as exc:
            raise HandleProblem(ErrorCode.RUN_REPLAY_MISMATCH, str(exc)) from None
        finally:
            self.table.expected = None
        if set(made) != set(maker.handles):
            raise HandleProblem(
                ErrorCode.RUN_REPLAY_MISMATCH,
                f"{label}() made other handles on resume than it did the first time",
            )
        self.table.labels.update(maker.handles)
