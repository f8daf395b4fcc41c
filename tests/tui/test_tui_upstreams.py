"""An upstream MCP server in the IDE: its tools in the catalog, and its destructive
`write_file` paused in another process, approved in the inbox here, written once."""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

import pytest
from test_tui_inbox import cli, listed, text_of
from tui_helpers import SIZE, make_app, open_inbox, screen_text, settle

sys.path.insert(0, str(Path(__file__).parent.parent / "host"))
from upstream_testing import program, require_servers, write_upstream_config

from run_repl.host.upstream.hosts import close_all

# Real processes talking for real: seconds each, out of the fast lane.
pytestmark = [pytest.mark.xdist_group("upstream_servers"), pytest.mark.slow]


@pytest.fixture
def files(data_dir: Path, tmp_path: Path) -> Path:
    require_servers()
    folder = tmp_path / "files"
    folder.mkdir()
    fs = str(program("mcp-server-filesystem"))
    write_upstream_config(Path(os.environ["RUN_REPL_CONFIG_DIR"]), "fs", fs, [str(folder)])
    yield folder
    close_all()


async def test_write_file_paused_elsewhere_is_approved_in_the_inbox_and_written_once(
    data_dir: Path, files: Path, no_arm_delay: None
) -> None:
    target = files / "note.txt"
    source = f"return await fs.write_file({{path: {json.dumps(str(target))}, content: 'from the inbox'}})"
    app = make_app(data_dir)
    async with app.run_test(size=SIZE) as pilot:
        assert "fs.write_file" in app.ws.host.manifest.functions
        await listed(app, lambda approvals: approvals == [])
        await open_inbox(pilot)
        code, _out, err = await cli(data_dir, "run", "-", stdin=source)
        assert code == 3, err  # paused in that process, waiting for a person
        assert not target.exists()
        await listed(app, lambda approvals: len(approvals) == 1)
        await settle(pilot)
        approval = app.main.approvals.approvals[0]
        assert approval.path == "fs.write_file"
        detail = text_of(app, "#inbox-detail-text")
        assert "Run upstream 'fs' tool 'write_file'?" in detail
        assert "from the inbox" in detail  # the arguments, whole
        await pilot.press("y")
        await settle(pilot)
        await listed(app, lambda approvals: approvals == [])
        assert "the run resumed: ok" in text_of(app, "#inbox-outcomes")
    assert target.read_text() == "from the inbox"
    final = app.ws.store.get_approval(approval.id)
    assert final is not None and final.status == "approved" and final.outcome == "ok"
    again = await cli(data_dir, "approvals", "approve", approval.id)
    assert again[0] != 0  # decided: it never runs twice
    assert target.read_text() == "from the inbox"


async def test_the_catalog_lists_an_upstreams_tools(data_dir: Path, files: Path) -> None:
    app = make_app(data_dir)
    async with app.run_test(size=(160, 48)) as pilot:
        await settle(pilot)
        text = screen_text(app)
        assert "fs" in text and "write_file" in text


async def test_a_changed_tool_list_reaches_the_catalog_and_completion(
    data_dir: Path, tmp_path: Path
) -> None:
    state = tmp_path / "state"
    state.mkdir()
    server = Path(__file__).parent.parent / "host" / "upstream_server.py"
    write_upstream_config(
        Path(os.environ["RUN_REPL_CONFIG_DIR"]),
        "up",
        sys.executable,
        [str(server)],
        {"UPSTREAM_STATE": str(state)},
    )
    app = make_app(data_dir)
    try:
        async with app.run_test(size=(160, 48)) as pilot:
            await settle(pilot)
            assert "extra(" not in screen_text(app)
            assert "up.echo" in {f.path for f in app.host_functions}
            result = await app.ws.run("return await up.grow()")
            assert result.status == "ok", result.error
            deadline = time.monotonic() + 20  # the list is heard on the upstreams' thread
            while "up.extra" not in {f.path for f in app.host_functions}:
                assert time.monotonic() < deadline, "the changed tool list never arrived"
                await pilot.pause(0.05)
            await settle(pilot)
            assert "extra({n})" in screen_text(app)
            editor = app.main.editor_tabs.active_editor
            assert editor is not None and "up.extra" in {f.path for f in editor.functions}
            # A snippet for this host names its functions, not the demo's.
            assert "crm." not in editor.text and "up.echo" in editor.text
    finally:
        close_all()
