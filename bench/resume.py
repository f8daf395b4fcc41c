"""Interrupt and resume benchmark: one approval, end to end.

    python bench/resume.py [--rounds N]

Prints the median of: the run that stops for approval (to its interrupted
result with a signed continuation), the resume that replays it and finishes,
and the two together. Spare workers are given time to start between runs, as
they have while a person decides.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import time

from run_repl import create_runner, requires_approval
from run_repl.sandbox.session.pool import default_pool

SOURCE = """
const drafts = await documents.listDrafts()
const published = await documents.publish(drafts[0].id)
return { published, count: drafts.length }
"""


async def main(rounds: int) -> None:
    runner = create_runner(secret="b" * 32)

    async def list_drafts() -> list[dict[str, str]]:
        return [{"id": "d1", "title": "Launch"}, {"id": "d2", "title": "Notes"}]

    @requires_approval(message=lambda draft_id: f"Publish {draft_id}?")
    async def publish(draft_id: str) -> dict[str, str]:
        return {"id": draft_id, "state": "published"}

    hosts = {"documents": {"listDrafts": list_drafts, "publish": publish}}
    await runner.run("1")
    stops: list[float] = []
    resumes: list[float] = []
    for _ in range(rounds):
        await asyncio.to_thread(default_pool().warm, 2.0)
        started = time.perf_counter()
        first = await runner.run(SOURCE, hosts)
        stops.append((time.perf_counter() - started) * 1000)
        assert first.status == "interrupted"
        # The person decides; meanwhile the next spare starts.
        await asyncio.to_thread(default_pool().warm, 2.0)
        started = time.perf_counter()
        done = await runner.run(
            SOURCE,
            hosts,
            continuation=first.continuation,
            resolutions=[{"interruption_id": first.interruptions[0].id, "value": True}],
        )
        resumes.append((time.perf_counter() - started) * 1000)
        assert done.status == "ok", done.error
    both = [a + b for a, b in zip(stops, resumes, strict=True)]
    print(f"run to interruption:      median {statistics.median(stops):6.2f} ms")
    print(f"resume to result:         median {statistics.median(resumes):6.2f} ms")
    print(f"interrupt plus resume:    median {statistics.median(both):6.2f} ms   (target <= 10 ms)")
    print(f"token size:               {len(first.continuation)} bytes")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rounds", type=int, default=30)
    asyncio.run(main(parser.parse_args().rounds))
