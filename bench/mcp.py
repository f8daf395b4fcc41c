"""MCP server benchmark: a tool call's round trip, and how soon a waiting call hears a decision.

    python bench/mcp.py [--rounds N] [--decisions N]

Starts `run-repl mcp` (stdio) on a fresh data directory with the demo host and
drives it with the `mcp` package's own client. Prints the medians of:

- round trip of `run` with a trivial snippet (`1 + 1`), as an agent calls it:
  with a pause between calls (an agent thinks between tool calls, so a spare
  sandbox is ready), and back to back;
- round trip of `docs` (no sandbox: what the protocol and the server cost);
- the engine alone (`runner.run` of `1 + 1` in this process), for comparison;
- a decision: a `run` that publishes a draft waits for approval; this process
  decides it through the store's flow (as `run-repl approvals approve` does),
  which resumes the run here. From the decision to the waiting tool call
  returning, and from the moment the store holds the outcome (the approver's
  flow has finished) to the tool call returning: the server's own latency.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

# This file is bench/mcp.py: run as a script, its directory would shadow the `mcp` package.
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).parent.resolve()]

import anyio  # noqa: E402
from mcp import Client, StdioServerParameters  # noqa: E402
from mcp.client.stdio import stdio_client  # noqa: E402

from run_repl.host.demo import reset_demo  # noqa: E402
from run_repl.workspace import open_workspace  # noqa: E402

PUBLISH = 'return await documents.publish("draft_01")'


def median_ms(samples: list[float]) -> str:
    return f"median {statistics.median(samples) * 1000:7.2f} ms  (p90 {sorted(samples)[int(len(samples) * 0.9)] * 1000:7.2f}, n={len(samples)})"


async def round_trips(
    client: Client, tool: str, arguments: dict[str, Any], rounds: int, pause: float
) -> list[float]:
    samples = []
    for _ in range(rounds):
        if pause:
            await anyio.sleep(pause)
        started = time.perf_counter()
        result = await client.call_tool(tool, arguments)
        samples.append(time.perf_counter() - started)
        assert not result.is_error, result.content
    return samples


async def engine_alone(data: Path, rounds: int) -> list[float]:
    with open_workspace(None, data_dir_override=str(data)) as ws:
        await ws.runner.run("1", ws.host.functions)
        samples = []
        for _ in range(rounds):
            await asyncio.sleep(0.05)
            started = time.perf_counter()
            result = await ws.runner.run("1 + 1", ws.host.functions)
            samples.append(time.perf_counter() - started)
            assert result.status == "ok"
        return samples


async def one_decision(client: Client, ws: Any) -> tuple[float, float]:
    """A run waits for approval; decide it here; (decided → returned, settled → returned)."""
    waiting = anyio.Event()
    returned: dict[str, float] = {}

    async def progress(p: float, total: float | None, message: str | None) -> None:
        waiting.set()

    async def call() -> None:
        result = await client.call_tool("run", {"code": PUBLISH}, progress_callback=progress)
        returned["at"] = time.perf_counter()
        assert result.structured_content["status"] == "ok", result.content

    async with anyio.create_task_group() as tg:
        tg.start_soon(call)
        await waiting.wait()
        [approval] = ws.store.list_approvals("pending")
        decided = time.perf_counter()
        result = await ws.decide({approval.id: True})
        settled = time.perf_counter()
        assert result.status == "ok", result.error
    return returned["at"] - decided, returned["at"] - settled


async def decisions(client: Client, data: Path, rounds: int) -> tuple[list[float], list[float]]:
    """(decision → tool returns, store settled → tool returns), per round."""
    whole: list[float] = []
    after_store: list[float] = []
    with open_workspace(None, data_dir_override=str(data)) as ws:
        for _ in range(rounds):
            reset_demo(data)
            a, b = await one_decision(client, ws)
            whole.append(a)
            after_store.append(b)
    return whole, after_store


async def main(rounds: int, decision_rounds: int) -> None:
    with tempfile.TemporaryDirectory(prefix="run-repl-bench-mcp-") as tmp:
        data = Path(tmp) / "data"
        data.mkdir()
        env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "HOME": tmp,
            "RUN_REPL_CONFIG_DIR": str(Path(tmp) / "config"),
        }
        params = StdioServerParameters(
            command=sys.executable,
            args=["-m", "run_repl.cli", "mcp", "--data-dir", str(data), "--approval-wait", "120"],
            env=env,
        )
        with (Path(tmp) / "stderr.txt").open("w") as errlog:
            started = time.perf_counter()
            async with Client(stdio_client(params, errlog=errlog)) as client:
                connected = time.perf_counter() - started
                version = client.protocol_version
                await client.list_tools()
                await round_trips(client, "run", {"code": "1"}, 3, 0.1)  # warm up
                paced = await round_trips(client, "run", {"code": "1 + 1"}, rounds, 0.1)
                back_to_back = await round_trips(client, "run", {"code": "1 + 1"}, rounds, 0)
                docs = await round_trips(client, "docs", {}, rounds, 0)
                decided, settled = await decisions(client, data, decision_rounds)
        engine = await engine_alone(data, rounds)
    print(f"start and connect (stdio, {version}): {connected * 1000:7.1f} ms")
    print(f"run `1 + 1`, paced 100 ms:     {median_ms(paced)}")
    print(f"run `1 + 1`, back to back:     {median_ms(back_to_back)}")
    print(f"docs (no sandbox):             {median_ms(docs)}")
    print(f"engine alone, runner.run:      {median_ms(engine)}")
    print(f"decision -> tool returns:      {median_ms(decided)}  (includes the resume)")
    print(f"store settled -> tool returns: {median_ms(settled)}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=50)
    parser.add_argument("--decisions", type=int, default=10)
    options = parser.parse_args()
    anyio.run(main, options.rounds, options.decisions)
