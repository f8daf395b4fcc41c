"""`run-repl run big.ts > out.json`: time and peak memory of writing a big value whole.

    python bench/cli_output.py [--items 1000000] [--repeat 1]

Runs the command in a process of its own, its stdout a file, for a value of
`--items` objects `{i, name}` (about 30 bytes each as JSON), twice: with
`--window` (the run alone, the first window written) and whole (the value
streamed from the store page by page). Prints for each the wall time, the
command's peak RSS (VmHWM, read from /proc while it runs), the output's size,
and checks the file is the whole value. Whole minus window is the cost of the
writing; memory that stays level with the window's run is the point.
The limits are raised in a config file of the bench's own (the default
max_value_bytes, 4 MiB, holds about 140,000 of these items).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def peak_rss_kib(pid: int) -> int | None:
    try:
        for row in Path(f"/proc/{pid}/status").read_text().splitlines():
            if row.startswith("VmHWM:"):
                return int(row.split()[1])
    except OSError:
        return None
    return None


def one(work: Path, items: int, window: bool) -> tuple[float, int, int, str]:
    snippet = work / "big.ts"
    snippet.write_text(
        f"return Array.from({{ length: {items} }}, (_, i) => ({{ i, name: 'n' + i }}))",
        encoding="utf-8",
    )
    out = work / "out.json"
    argv = [
        sys.executable,
        "-m",
        "run_repl.cli",
        "run",
        str(snippet),
        "--data-dir",
        str(work / "d"),
    ]
    env = {
        **os.environ,
        "PYTHONPATH": str(ROOT),
        "RUN_REPL_CONFIG_DIR": str(work / "config"),
    }
    started = time.perf_counter()
    with out.open("wb") as sink:
        proc = subprocess.Popen(
            [*argv, *(["--window"] if window else [])],
            stdout=sink,
            stderr=subprocess.PIPE,
            env=env,
        )
        peak = 0
        while proc.poll() is None:
            peak = max(peak, peak_rss_kib(proc.pid) or 0)
            time.sleep(0.01)
        stderr = proc.stderr.read().decode() if proc.stderr else ""
    elapsed = time.perf_counter() - started
    if proc.returncode != 0:
        raise SystemExit(f"exit {proc.returncode}: {stderr}")
    value = json.loads(out.read_text(encoding="utf-8"))
    check = (
        "whole" if len(value) == items and value[-1]["i"] == items - 1 else f"{len(value):,} items"
    )
    return elapsed, peak, out.stat().st_size, check


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--items", type=int, default=1_000_000)
    parser.add_argument("--repeat", type=int, default=1)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        (work / "config").mkdir()
        (work / "config" / "config.toml").write_text(
            "[limits]\nmax_value_bytes = 1073741824\nmemory_bytes = 2147483648\n"
            "timeout_ms = 600000\n",
            encoding="utf-8",
        )
        print(f"{args.items:,} items {{i, name}}; load {os.getloadavg()[0]:.1f}")
        for _ in range(args.repeat):
            for window in (True, False):
                elapsed, peak, size, check = one(work, args.items, window)
                label = "--window" if window else "whole   "
                print(
                    f"  {label} {elapsed:6.2f} s  peak RSS {peak / 1024:7.1f} MiB  "
                    f"out {size / (1 << 20):7.2f} MiB  ({check})"
                )


if __name__ == "__main__":
    main()
