"""A principal pages its own value at once, while the store is still writing it behind
(the history row's write, which holds it, failed: a full disk): the owner check must
not read "not written yet" as "not yours", nor let anyone else page it."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from run_repl.mcp.server import RunReplMcp
from run_repl.workspace import open_workspace

BIG = "return Array.from({length: 300}, (_, n) => ({n}))"


async def test_a_principal_pages_its_value_while_it_is_being_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("RUN_REPL_CONFIG_DIR", str(tmp_path / "config"))
    with open_workspace(None, data_dir_override=str(tmp_path / "data")) as ws:
        written = threading.Event()
        real = ws.store.put_items
        tried: set[str] = set()

        def full(*args: Any, **kwargs: Any) -> None:
            raise OSError("the disk is full")  # the history row, and the values with it

        def held(item: Any) -> None:
            # Then the values are written on their own before the reply, and one whose
            # write fails goes behind: the reply goes out, and the writer tries again.
            # The first try fails; the second waits until the page has been read.
            if item.ref not in tried:
                tried.add(item.ref)
                raise OSError("the disk is full")
            written.wait(30)
            real(item)

        monkeypatch.setattr(ws.store, "record_run", full)
        monkeypatch.setattr(ws.store, "put_items", held)
        app = RunReplMcp(ws)
        who = ["alice"]
        monkeypatch.setattr(app, "principal", lambda ctx: who[0])
        try:
            async with Client(app.build()) as client:
                big = await client.call_tool("run", {"code": BIG})
                ref = big.structured_content["value_ref"]
                page = await client.call_tool(
                    "expand_result", {"value_ref": ref, "offset": 10, "limit": 3}
                )
                assert not written.is_set() and ws.store.get_items(ref) is None
                who[0] = "bob"
                theirs = await client.call_tool(
                    "expand_result", {"value_ref": ref, "offset": 0, "limit": 3}
                )
                written.set()  # the write lands; closing the server waits for it
        finally:
            written.set()
    assert not page.is_error, page.structured_content
    assert theirs.is_error and theirs.structured_content["error"]["code"] == "RESULT_REF_NOT_FOUND"
    assert page.structured_content["items"] == [{"n": 10}, {"n": 11}, {"n": 12}]
