#!/usr/bin/env python3
"""Offline preview wall times against the floor, as whole processes (median of N runs).

The floor is a bare interpreter that imports exactly the SDK modules a preview loads
(read from a real preview, so it follows the program as it grows). Measured: every environment
(dev, staging, prod, the 7,600-GPU-node prod-scale fleet) and a synthetic fleet of 50 clusters,
each previewed whole as the graph of its unit stacks (`make preview`), sequentially and with
both cores (`--workers 2`: a wave's units side by side), with the time per registered resource;
then the largest single unit stack of each, which bounds one CI job; then `make review BASE=HEAD`
next to the head's side alone. Goals (docs/performance.md): prod within 1.5x the floor; prod-scale
within 2x prod; cost that follows pools and clusters, not nodes; a review with its base within
1.5x the head alone. Then, once each, `make lint` and the test suite as `make test` runs it (goal:
under 3 minutes on 2 cores).

    python scripts/bench.py [--runs 5] [--stack prod ...] [--synthetic-clusters 50] [--no-tests]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
SDK_PREFIXES = ("pulumi", "pulumi_azure_native", "pulumi_kubernetes", "pulumi_policy")

LIST_SDK_MODULES = f"""
import json, sys
sys.path.insert(0, {str(ROOT)!r})
from offline.environment import preview_environment
environment = preview_environment(sys.argv[1])
assert environment.ok, environment.error
print(json.dumps(sorted(m for m in sys.modules if m.split(".")[0] in {SDK_PREFIXES!r})))
"""
WORKERS = 2


# Regions with availability zones (facts/azure_regions.py): every pool spreads over zones.
REGIONS = (
    "eastus2",
    "southcentralus",
    "westus3",
    "centralus",
    "canadacentral",
    "westus2",
    "eastus",
    "westeurope",
    "northeurope",
    "swedencentral",
)


def synthetic_fleet(clusters: int) -> dict:
    """A prod-like environment of `clusters` clusters, five per region, each with a CPU pool
    and two 500-node H100 pools (a 50-cluster fleet holds 50,000 GPU nodes)."""
    import yaml

    values = yaml.safe_load((ROOT / "stacks" / "Pulumi.prod.yaml").read_text())["config"]
    per_region = 5
    regions = REGIONS[: (clusters + per_region - 1) // per_region]
    values["platform:network"]["regions"] = {
        region: {
            "addressSpace": [f"10.{100 + r}.0.0/16"],
            "subnets": {
                "privateEndpoints": f"10.{100 + r}.250.0/24",
                "firewall": f"10.{100 + r}.254.0/26",
                "lustre": f"10.{100 + r}.248.0/24",
            },
        }
        for r, region in enumerate(regions)
    }
    # A Managed Lustre file system in every region, as prod has in each GPU region.
    template_fs = next(iter(values["platform:lustre"]["fileSystems"].values()))
    values["platform:lustre"]["fileSystems"] = {region: dict(template_fs) for region in regions}
    values["platform:network"]["onPremisesRanges"] = []
    template = values["platform:clusters"]["eus2"]
    fleet = {}
    for i in range(clusters):
        r, c = divmod(i, per_region)
        octet = 100 + r
        cluster = json.loads(json.dumps(template))
        cluster["region"] = regions[r]
        cluster["subnets"] = {
            "system": f"10.{octet}.{c * 32}.0/24",
            "nodes": f"10.{octet}.{c * 32 + 16}.0/20",
            "apiServer": f"10.{octet}.{240 + c}.0/28",
        }
        cluster["nodePools"]["cpu"]["maxCount"] = 100
        cluster["gpuPools"] = {
            name: {
                "vmSize": "Standard_ND96isr_H100_v5",
                "purpose": "training",
                "maxCount": 500,
                "zones": ["1"],
                "quotas": {"research": 2000, "inference": 2000},
            }
            for name in ("h100a", "h100b")
        }
        fleet[f"c{r:02d}{c}"] = cluster
    values["platform:clusters"] = fleet
    # Clusters and pools only: no MultiKueue dispatchers (a MultiKueueConfig holds 20 workers).
    values.pop("platform:jobs", None)
    values["platform:fleet"] = {"canaryClusters": ["c000"]}
    # Kafka in the first cluster of each region (mirrored between all of them, like prod's
    # two), where its clients run: an identity holds at most 20 federated credentials.
    kafka_hosts = [name for name in fleet if name.endswith("0")]
    values["platform:kafka"]["strimzi"]["clusters"] = kafka_hosts
    for workload in values.get("platform:workloads", {}).values():
        workload["clusters"] = kafka_hosts
    # Flink beside Kafka: its jobs are Kafka clients too.
    if "platform:streaming" in values:
        values["platform:streaming"]["clusters"] = kafka_hosts
    # A serving gateway where the workloads run, one per region.
    if "platform:serving" in values:
        values["platform:serving"]["clusters"] = kafka_hosts
    return values


def synthetic_stack(clusters: int) -> str:
    """A variant of prod, named by the rule every stack follows (stackconfig/stacks.py)."""
    return f"prod-synth{clusters}"


def synthetic_project(clusters: int) -> tuple[Path, str]:
    """A project folder whose environment file is the synthetic fleet's (the program and its
    packages are the repository's): every unit reads that file, as they read stacks/."""
    import shutil
    import tempfile

    import yaml

    name = synthetic_stack(clusters)
    project = Path(tempfile.mkdtemp(prefix="bench-"))
    shutil.copy(ROOT / "Pulumi.yaml", project / "Pulumi.yaml")
    shutil.copy(ROOT / "__main__.py", project / "__main__.py")
    (project / "stacks").mkdir()
    (project / "stacks" / f"Pulumi.{name}.yaml").write_text(yaml.safe_dump({"config": synthetic_fleet(clusters)}))
    return project, name


def preview_synthetic(clusters: int, workers: int = 1):
    from offline.environment import preview_environment

    project, name = synthetic_project(clusters)
    environment = preview_environment(name, project, workers=workers)
    if not environment.ok:
        raise SystemExit(environment.error)
    return environment


def preview_named(name: str):
    """An environment previewed as its unit stacks, in this process."""
    from offline.environment import preview_environment

    if name.startswith("synthetic-"):
        return preview_synthetic(int(name.split("-")[1]))
    environment = preview_environment(name)
    assert environment.ok, environment.error
    return environment


def resource_count(name: str) -> int:
    return len(preview_named(name).resources)


def policy_review_seconds(runs: int) -> tuple[float, int]:
    """Median in-process time of evaluating both packs against prod's units' union, and the policy count."""
    from offline.environment import review_environment

    environment = preview_named("prod")
    reviews = [review_environment(environment, "prod") for _ in range(runs)]
    return statistics.median(r.seconds for r in reviews), sum(len(c.pack.policies) for c in reviews[0].configs)


def timed(command: list[str]) -> tuple[float, int]:
    """Wall seconds and peak RSS (MiB) of one process."""
    started = time.perf_counter()
    process = subprocess.Popen(command, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(process.pid, 0)
    elapsed = time.perf_counter() - started
    if os.waitstatus_to_exitcode(status) != 0:
        errors = process.stderr.read().decode() if process.stderr else ""
        raise SystemExit(f"failed: {' '.join(command)}\n{errors}")
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
    return {name: (statistics.median(s for s, _ in runs_), max(m for _, m in runs_)) for name, runs_ in samples.items()}


def test_suite_seconds() -> tuple[float, float, str]:
    """`make lint` and the test suite as `make test` runs them (pytest-xdist, every core), once."""
    started = time.perf_counter()
    linted = subprocess.run(["make", "--no-print-directory", "lint"], cwd=ROOT, capture_output=True, text=True)
    lint = time.perf_counter() - started
    if linted.returncode != 0:
        raise SystemExit(f"make lint failed:\n{linted.stdout[-2000:]}{linted.stderr[-2000:]}")
    environment = {**os.environ, "SHARED_DIR": os.environ.get("SHARED_DIR", "../shared")}
    started = time.perf_counter()
    result = subprocess.run(
        # pytest.ini already asks for -q; a second -q would drop the summary line read below.
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider"],
        cwd=ROOT,
        env=environment,
        capture_output=True,
        text=True,
    )
    seconds = time.perf_counter() - started
    found = re.findall(r"\d+ (?:passed|failed)[^\n]*", result.stdout)
    summary = found[-1] if found else result.stderr[-500:]
    if result.returncode != 0:
        raise SystemExit(f"the test suite failed: {summary}")
    return lint, seconds, summary


def review_seconds(runs: int) -> dict[str, tuple[float, int]]:
    """`make review BASE=HEAD` (every stack at a base and at the head, two processes) next to
    the head's side alone (scripts/review_side.py): the base costs the other core, not time."""
    import tempfile

    out = Path(tempfile.mkdtemp(prefix="bench-review-"))
    commands = {
        "review: the head alone": [
            sys.executable,
            "scripts/review_side.py",
            "--root",
            str(ROOT),
            "--out",
            str(out / "head.json"),
        ],
        "review: base and head": [
            sys.executable,
            "scripts/review.py",
            "--base",
            "HEAD",
            *("--markdown", str(out / "review.md"), "--full", str(out / "full.md"), "--json", str(out / "review.json")),
        ],
    }
    return measure(commands, runs)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--stack", action="append", help="stacks to time (default: dev, staging, prod, prod-scale)")
    parser.add_argument("--synthetic-clusters", type=int, default=50, help="clusters of the synthetic fleet (0: skip)")
    parser.add_argument("--no-tests", action="store_true", help="skip timing make lint and the test suite")
    parser.add_argument("--review-runs", type=int, default=3, help="runs of `make review BASE=HEAD` (0: skip)")
    parser.add_argument("--tests-only", action="store_true", help="time only make lint and the test suite")
    parser.add_argument("--preview-synthetic", type=int, help=argparse.SUPPRESS)  # the timed child process
    parser.add_argument("--workers", type=int, default=1, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.preview_synthetic:
        preview_synthetic(args.preview_synthetic, args.workers)
        return 0
    if args.tests_only:
        lint, seconds, summary = test_suite_seconds()
        print(f"make lint: {lint:.1f}s; the test suite ({os.cpu_count()} workers): {seconds:.1f}s ({summary})")
        return 0
    stacks = args.stack or ["dev", "staging", "prod", "prod-scale"]

    modules = json.loads(subprocess.check_output([sys.executable, "-c", LIST_SDK_MODULES, "prod"], cwd=ROOT))
    floor_code = f"import importlib\nfor m in {modules!r}:\n    importlib.import_module(m)\n"
    commands = {"floor": [sys.executable, "-c", floor_code]}
    for stack in stacks:
        commands[stack] = [sys.executable, "scripts/preview.py", "--stack", stack, "--no-tree", "--no-policies"]
        if stack in ("prod", "prod-scale"):
            commands[f"{stack} x{WORKERS}"] = [*commands[stack], "--workers", str(WORKERS)]
    if "prod" in stacks:
        # What `make preview STACK=prod` runs: the preview plus both policy packs.
        commands["prod + policies"] = [sys.executable, "scripts/preview.py", "--stack", "prod", "--no-tree"]
    if args.synthetic_clusters:
        name = f"synthetic-{args.synthetic_clusters}"
        commands[name] = [sys.executable, "scripts/bench.py", "--preview-synthetic", str(args.synthetic_clusters)]
        commands[f"{name} x{WORKERS}"] = [*commands[name], "--workers", str(WORKERS)]
    results = measure(commands, args.runs)
    # Counted after timing: a preview in this process would raise every child's peak RSS.
    preview_named("dev")  # warm: the first preview in a process also imports the components
    environments = {name.split(" ")[0]: preview_named(name.split(" ")[0]) for name in commands if name != "floor"}
    counts = {name: len(environments[name.split(" ")[0]].resources) for name in commands if name != "floor"}
    floor, floor_mem = results.pop("floor")

    print(f"offline preview of each environment as its unit stacks, whole process, median of {args.runs}")
    print(f"interleaved runs ({os.cpu_count()} cores; x{WORKERS}: a wave's units in {WORKERS} processes)")
    print(f"{'what':<34}{'resources':>10}{'seconds':>9}{'x floor':>9}{'ms/resource':>13}{'peak MiB':>10}")
    print(
        f"{'floor (' + str(len(modules)) + ' SDK modules imported)':<34}{'':>10}{floor:>9.2f}{1:>9.2f}{'':>13}{floor_mem:>10}"
    )
    for name, (seconds, memory) in results.items():
        per_resource = (seconds - floor) / counts[name] * 1000
        print(
            f"{'preview ' + name:<34}{counts[name]:>10}{seconds:>9.2f}{seconds / floor:>9.2f}{per_resource:>13.1f}{memory:>10}"
        )
    print("largest single unit stack (in-process seconds of one run; a CI job adds the floor):")
    for name, environment in environments.items():
        stack, plan = max(environment.plans.items(), key=lambda item: item[1].seconds)
        print(
            f"  {name:<20} {len(environment.plans):>3} stacks; largest {stack} "
            f"({len(plan.resources)} resources) {plan.seconds:.2f}s"
        )
    if "prod" in results:
        ratio = results["prod"][0] / floor
        print(f"goal: prod preview <= 1.5x floor -> {ratio:.2f}x ({'meets' if ratio <= 1.5 else 'misses'} the goal)")
    if "prod" in results:
        seconds, policies = policy_review_seconds(args.runs)
        print(
            f"policy review of prod ({policies} policies, in-process, median of {args.runs}): {seconds:.2f}s "
            f"next to {results['prod'][0]:.2f}s for its preview"
        )
    if "prod" in results and "prod-scale" in results:
        ratio = results["prod-scale"][0] / results["prod"][0]
        print(
            f"goal: prod-scale (7,600 GPU nodes) <= 2x prod -> {ratio:.2f}x ({'meets' if ratio <= 2 else 'misses'} the goal)"
        )
    if args.review_runs:
        timings = review_seconds(args.review_runs)
        for name, (seconds, memory) in timings.items():
            print(f"{name + ' (every stack, policies)':<50}{seconds:>9.2f}s{memory:>10} MiB peak")
        ratio = timings["review: base and head"][0] / timings["review: the head alone"][0]
        print(
            f"goal: base and head <= 1.5x the head alone -> {ratio:.2f}x ({'meets' if ratio <= 1.5 else 'misses'} the goal)"
        )
    if not args.no_tests:
        lint, seconds, summary = test_suite_seconds()
        print(f"make lint: {lint:.1f}s; the test suite ({os.cpu_count()} workers): {seconds:.1f}s ({summary})")
        total = lint + seconds
        print(
            f"goal: make test (lint + suite) < 180s on 2 cores -> {total:.0f}s ({'meets' if total < 180 else 'misses'} the goal)"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
