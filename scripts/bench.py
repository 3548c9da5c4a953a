#!/usr/bin/env python3
"""Offline preview wall times against the floor, as whole processes (median of N runs).

The floor is a bare interpreter that imports exactly the SDK modules a preview loads
(read from a real preview, so it follows the program as it grows). Goal (README): the
prod preview within 1.5x the floor.

    python scripts/bench.py [--runs 5] [--stack prod ...]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SDK_PREFIXES = ("pulumi", "pulumi_azure_native", "pulumi_kubernetes", "pulumi_policy")

LIST_SDK_MODULES = f"""
import json, sys
sys.path.insert(0, {str(ROOT)!r})
from offline.engine import preview_stack
plan = preview_stack(sys.argv[1])
assert plan.ok, plan.error
print(json.dumps(sorted(m for m in sys.modules if m.split(".")[0] in {SDK_PREFIXES!r})))
"""


def timed(command: list[str]) -> tuple[float, int]:
    """Wall seconds and peak RSS (MiB) of one process."""
    started = time.perf_counter()
    process = subprocess.Popen(command, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(process.pid, 0)
    elapsed = time.perf_counter() - started
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"failed: {' '.join(command)}\n{process.stderr.read().decode()}")
    return elapsed, usage.ru_maxrss // 1024


def measure(commands: dict[str, list[str]], runs: int) -> dict[str, tuple[float, int]]:
    """Median wall time and peak RSS per command. Runs are interleaved (floor, dev, staging,
    prod, floor, ...) so that noise on a shared machine falls on every command alike."""
    for command in commands.values():
        timed(command)  # warm the file cache
    samples: dict[str, list[tuple[float, int]]] = {name: [] for name in commands}
    for _ in range(runs):
        for name, command in commands.items():
            samples[name].append(timed(command))
    return {
        name: (statistics.median(s for s, _ in runs_), max(m for _, m in runs_))
        for name, runs_ in samples.items()
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--stack", action="append", help="stacks to time (default: dev, staging, prod)")
    args = parser.parse_args()
    stacks = args.stack or ["dev", "staging", "prod"]

    modules = json.loads(subprocess.check_output([sys.executable, "-c", LIST_SDK_MODULES, "prod"], cwd=ROOT))
    floor_code = "import importlib\nfor m in %r:\n    importlib.import_module(m)\n" % modules
    commands = {"floor": [sys.executable, "-c", floor_code]}
    for stack in stacks:
        commands[stack] = [sys.executable, "scripts/preview.py", "--stack", stack, "--no-tree"]
    results = measure(commands, args.runs)
    floor, floor_mem = results.pop("floor")

    print(f"offline preview, whole process, median of {args.runs} interleaved runs ({os.cpu_count()} cores)")
    print(f"{'what':<34}{'seconds':>9}{'x floor':>9}{'peak MiB':>10}")
    print(f"{'floor (' + str(len(modules)) + ' SDK modules imported)':<34}{floor:>9.2f}{1:>9.2f}{floor_mem:>10}")
    for stack, (seconds, memory) in results.items():
        print(f"{'preview ' + stack:<34}{seconds:>9.2f}{seconds / floor:>9.2f}{memory:>10}")
    if "prod" in results:
        ratio = results["prod"][0] / floor
        print(f"goal: prod preview <= 1.5x floor -> {ratio:.2f}x ({'meets' if ratio <= 1.5 else 'misses'} the goal)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
