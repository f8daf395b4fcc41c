"""The IDE's export (ctrl+e) of a big stored value: time and peak memory per format.

    python bench/export.py [--items 1000000]

Runs a snippet returning `--items` objects `{i, name, tags}` through a workspace
of the bench's own (SQLite store in a temporary data dir, limits raised in its
config as bench/cli_output.py does), then exports the stored value with the
panel's `ExportJob` (page by page from the store, through a temporary file) to
JSON, JSON Lines and CSV. For each: wall time, the file's size, the process's RSS
before and its peak during the export (VmHWM, reset through /proc/self/clear_refs
before each export), and a check that the file holds every item. A peak that
stays near the RSS before it, whatever --items is, is the point.
"""

from __future__ import annotations

import argparse
import asyncio
import csv
import json
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def status_kib(field: str) -> int:
    for row in Path("/proc/self/status").read_text().splitlines():
        if row.startswith(field + ":"):
            return int(row.split()[1])
    return 0


def reset_peak() -> None:
    # "5" resets the peak RSS (VmHWM) to the current RSS (Linux 4.0+).
    Path("/proc/self/clear_refs").write_text("5")


def count_items(path: Path) -> int:
    if path.suffix == ".csv":
        with path.open(newline="", encoding="utf-8") as f:
            return sum(1 for _ in csv.reader(f)) - 1
    if path.suffix == ".jsonl":
        with path.open(encoding="utf-8") as f:
            return sum(1 for _ in f)
    return len(json.loads(path.read_text(encoding="utf-8")))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--items", type=int, default=1_000_000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        (work / "config").mkdir()
        (work / "config" / "config.toml").write_text(
            "[limits]\nmax_value_bytes = 1073741824\nmemory_bytes = 2147483648\n"
            "timeout_ms = 600000\n",
            encoding="utf-8",
        )
        os.environ["RUN_REPL_CONFIG_DIR"] = str(work / "config")
        from run_repl.sandbox.result import RunResult
        from run_repl.tui.components.value.model import ValuePages
        from run_repl.workspace import open_workspace

        ws = open_workspace(data_dir_override=str(work / "d"))
        started = time.perf_counter()
        snippet = (
            f"return Array.from({{ length: {args.items} }}, "
            "(_, i) => ({ i, name: 'n' + i, tags: [i % 7] }))"
        )
        result: RunResult = asyncio.run(ws.run(snippet))
        assert result.ok, result.error
        print(
            f"{args.items:,} items {{i, name, tags}}: run and store {time.perf_counter() - started:.1f} s; "
            f"load {os.getloadavg()[0]:.1f}"
        )
        model = ValuePages()
        from run_repl.tui.components.value.model import Shown

        model.set(Shown.from_result(result), ws.runner.expand)
        for name in ("value.json", "value.jsonl", "value.csv"):
            target = work / name
            job = model.export_job(target)
            before = status_kib("VmRSS")
            reset_peak()
            started = time.perf_counter()
            count = job.run()
            elapsed = time.perf_counter() - started
            peak = status_kib("VmHWM")
            check = count_items(target)
            print(
                f"  {name:12} {elapsed:6.2f} s  {target.stat().st_size / (1 << 20):7.1f} MiB  "
                f"RSS before {before / 1024:6.1f} MiB  peak {peak / 1024:6.1f} MiB  "
                f"({(peak - before) / 1024:+.1f})  "
                f"{'whole' if check == count == args.items else f'{check:,} items!'}"
            )
            target.unlink()
        ws.store.close()


if __name__ == "__main__":
    main()
