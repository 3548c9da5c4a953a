"""Shared fixtures: each stack is previewed once per session; bad configs run through the
same engine with one key changed."""

from __future__ import annotations

import copy
import dataclasses
import fcntl
import functools
import json
import pickle
import shutil
import subprocess
import sys
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest
import yaml

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from offline.engine import Plan, preview_stack, run_program  # noqa: E402
from offline.environment import EnvironmentPlan, preview_environment  # noqa: E402
from offline.mocks import cloud_subscription  # noqa: E402
from validation.stackfile import StackConfig, as_cli_string, read_stack_config  # noqa: E402

STACKS = ("dev", "staging", "prod")
# With the 7,600-GPU-node fleet, for the tests that hold for every stack file.
ALL_STACKS = STACKS + ("prod-scale",)


class SessionPlans(Mapping[str, Plan]):
    """Each stack's offline preview, made once per test run and shared by the pytest-xdist
    workers through `directory`: the first worker to need a stack previews it (holding that
    stack's lock), the others read its pickle. The engine is deterministic
    (tests/test_engine.py previews every stack twice in one process and compares), so a worker
    that reads a plan sees what it would have made. Tests treat plans as read-only; edits go
    through tests/support/plan_edits.py, which copies."""

    kind = "plan"

    def __init__(self, directory: Path):
        self.directory = directory
        self.loaded: dict[str, Any] = {}

    def make(self, stack: str) -> Any:
        return preview_stack(stack)

    def __getitem__(self, stack: str) -> Any:
        if stack not in ALL_STACKS:
            raise KeyError(stack)
        if stack not in self.loaded:
            cached = self.directory / f"{stack}.{self.kind}.pickle"
            with (self.directory / f"{stack}.{self.kind}.lock").open("w") as lock:
                fcntl.flock(lock, fcntl.LOCK_EX)
                if cached.exists():
                    plan = pickle.loads(cached.read_bytes())
                else:
                    plan = self.make(stack)
                    assert plan.ok, f"{stack} failed to preview:\n{plan.error}"
                    cached.write_bytes(pickle.dumps(plan))
            self.loaded[stack] = plan
        return self.loaded[stack]

    def __iter__(self) -> Iterator[str]:
        return iter(ALL_STACKS)

    def __len__(self) -> int:
        return len(ALL_STACKS)


class SessionUnitPlans(SessionPlans):
    """Each environment previewed as its deployment units (offline.environment), shared alike."""

    kind = "units"

    def make(self, stack: str) -> EnvironmentPlan:
        return preview_environment(stack)


def _shared_directory(tmp_path_factory, worker_id) -> Path:
    # Under xdist every worker's base temp dir sits in one directory per run: share that one.
    root = tmp_path_factory.getbasetemp()
    shared = root.parent if worker_id != "master" else root
    directory = shared / "plans"
    directory.mkdir(exist_ok=True)
    return directory


@pytest.fixture(scope="session")
def plans(tmp_path_factory, worker_id) -> Mapping[str, Plan]:
    """The single-stack offline preview of every environment, made once per test run (shared by
    the workers): the reference the units are held to, and what most tests read."""
    return SessionPlans(_shared_directory(tmp_path_factory, worker_id))


@pytest.fixture(scope="session")
def unit_plans(tmp_path_factory, worker_id) -> SessionUnitPlans:
    """Every environment previewed as the graph of its unit stacks, as `make preview` does."""
    return SessionUnitPlans(_shared_directory(tmp_path_factory, worker_id))


@functools.cache
def second_preview(stack: str, cloud: str | None = None) -> Plan:
    """Another preview of `stack` in this worker process, made once: as another tenant and
    subscription with `cloud` (every ID Azure generates differs). Tests that compare a second
    run with the first share it."""
    if cloud is None:
        plan = preview_stack(stack)
    else:
        # The same stack deployed to that cloud's subscription (platform:subscriptionId follows).
        config = read_stack_config(ROOT, stack)
        values = {**config.values, "platform:subscriptionId": cloud_subscription(cloud)}
        plan = run_program(dataclasses.replace(config, values=values), ROOT, cloud=cloud)
    assert plan.ok, f"{stack} failed to preview again:\n{plan.error}"
    return plan


@functools.cache
def _stack_document(stack: str) -> dict[str, Any]:
    return yaml.load((ROOT / "stacks" / f"Pulumi.{stack}.yaml").read_text(), Loader=yaml.CSafeLoader)


def stack_values(stack: str) -> dict[str, Any]:
    """A stack file's config as Python values (for tests that change one key), a fresh copy."""
    return copy.deepcopy(_stack_document(stack)["config"])


def run_with(stack: str, change: Callable[[dict[str, Any]], None]) -> Plan:
    """Preview `stack` after `change` edits its config values in place."""
    values = stack_values(stack)
    change(values)
    base = read_stack_config(ROOT, stack)
    # As the CLI hands values over: objects and lists as JSON, scalars as text (true, false).
    encoded = {k: as_cli_string(v) for k, v in values.items()}
    return run_program(StackConfig(base.project, stack, encoded, []), ROOT)


def without_kafka_lag_scaling(values: dict[str, Any]) -> None:
    """A stack switched to Event Hubs loses its Kafka-lag scaling (Strimzi's exporter feeds it)."""
    serving = values.get("platform:serving") or {}
    if "scaling" in serving:
        serving["scaling"] = {k: v for k, v in serving["scaling"].items() if v.get("signal") != "kafka-lag"}


def assert_problems(stack: str, change: Callable[[dict[str, Any]], None], expected: dict[str, str]) -> None:
    """`change` stops the preview of `stack` with one message naming each key of `expected` with
    words of its reason, nothing registered, no traceback."""
    plan = run_with(stack, change)
    assert plan.resources == [] and plan.error is not None and "Traceback" not in plan.error
    for key, words in expected.items():
        lines = [line for line in plan.error.splitlines() if line.strip().startswith(f"- {key}:")]
        assert any(words in line for line in lines), f"{key}: {words!r} not in\n{plan.error}"


def copy_project(destination: Path) -> Path:
    """The repository's files (no venv, git or build output), for tests that run the CLI on an
    edited stack file without touching the real one."""
    shutil.copytree(
        ROOT,
        destination,
        symlinks=True,
        ignore=shutil.ignore_patterns(
            "venv", ".git", "out", ".pytest_cache", "__pycache__", ".mypy_cache", ".ruff_cache", "node_modules"
        ),
    )
    return destination


def azure_resources(plan: Plan) -> list:
    return [r for r in plan.resources if r.type.startswith("azure-native:")]


def review_side(root: Path, stacks: tuple[str, ...], out: Path) -> dict[str, Any]:
    """One side of `make review BASE=...` (scripts/review_side.py) of the checkout at `root`."""
    command = [sys.executable, str(ROOT / "scripts" / "review_side.py"), "--root", str(root), "--out", str(out)]
    command += [arg for stack in stacks for arg in ("--stack", stack)]
    subprocess.run(command, cwd=root, check=True)
    return json.loads(out.read_text())


@pytest.fixture(scope="session")
def head_side(tmp_path_factory, worker_id, unit_plans) -> dict[str, Any]:
    """This checkout's side document of every environment, made once per run (workers share it)
    from the run's unit plans with scripts/review_side.py's own function: the base that the
    tests' edited copies (previewed by the script in a process of their own) are compared with."""
    from scripts.review_side import preview_side

    directory = _shared_directory(tmp_path_factory, worker_id)
    cached = directory / "head-side.json"
    with (directory / "head-side.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not cached.exists():
            document = preview_side(ROOT, list(ALL_STACKS), previewed=unit_plans)
            assert "error" not in document, document["error"]
            (directory / "head-side.tmp.json").write_text(json.dumps(document, sort_keys=True))
            (directory / "head-side.tmp.json").rename(cached)
    return json.loads(cached.read_text())
