"""Shared fixtures: each stack is previewed once per session; bad configs run through the
same engine with one key changed."""

from __future__ import annotations

import copy
import shutil
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from offline.engine import Plan, preview_stack, run_program  # noqa: E402
from offline.stackfile import StackConfig, as_cli_string, read_stack_config  # noqa: E402

STACKS = ("dev", "staging", "prod")
# With the 7,600-GPU-node fleet, for the tests that hold for every stack file.
ALL_STACKS = STACKS + ("prod-scale",)


@pytest.fixture(scope="session")
def plans() -> dict[str, Plan]:
    """The offline preview of every stack, all in this one process."""
    previews = {stack: preview_stack(stack) for stack in ALL_STACKS}
    for stack, plan in previews.items():
        assert plan.ok, f"{stack} failed to preview:\n{plan.error}"
    return previews


def stack_values(stack: str) -> dict[str, Any]:
    """A stack file's config as Python values (for tests that change one key)."""
    document = yaml.safe_load((ROOT / "stacks" / f"Pulumi.{stack}.yaml").read_text())
    return copy.deepcopy(document["config"])


def run_with(stack: str, change: Callable[[dict[str, Any]], None]) -> Plan:
    """Preview `stack` after `change` edits its config values in place."""
    values = stack_values(stack)
    change(values)
    base = read_stack_config(ROOT, stack)
    # As the CLI hands values over: objects and lists as JSON, scalars as text (true, false).
    encoded = {k: as_cli_string(v) for k, v in values.items()}
    return run_program(StackConfig(base.project, stack, encoded, []), ROOT)


def copy_project(destination: Path) -> Path:
    """The repository's files (no venv, git or build output), for tests that run the CLI on an
    edited stack file without touching the real one."""
    shutil.copytree(
        ROOT,
        destination,
        symlinks=True,
        ignore=shutil.ignore_patterns("venv", ".git", "out", ".pytest_cache", "__pycache__"),
    )
    return destination


def azure_resources(plan: Plan) -> list:
    return [r for r in plan.resources if r.type.startswith("azure-native:")]
