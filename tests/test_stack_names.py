"""One naming rule for stacks, and what a stack may not share with the repository's others.

The rule (stackconfig/stacks.py) is checked by the program, the scripts the workflows run and the
workflows' own shell (tests/test_delivery.py holds those equal); here, the collisions a stack file
copied from another would bring (validation/checks/repository.py), on the repository's files."""

from __future__ import annotations

import itertools
import json
import subprocess
import sys

import pytest

from planning.naming import storage_account_name
from stackconfig.stacks import ENVIRONMENTS, environment_of, stack_name_problem
from tests.conftest import ROOT, copy_project
from validation.checks.repository import collisions
from validation.loader import ConfigError, parse_platform_config, repository_stacks
from validation.stackfile import available_stacks, read_stack_config


def copied(stack: str, **changes: object) -> dict[str, str]:
    """`stack`'s config values as the CLI hands them over, with `platform:<key>` changes."""
    values = dict(read_stack_config(ROOT, stack).values)
    for name, value in changes.items():
        values[f"platform:{name}"] = value if isinstance(value, str) else json.dumps(value)
    return values


def problems_of(values: dict[str, str], stack: str) -> list[str]:
    with pytest.raises(ConfigError) as refused:
        parse_platform_config(values, stack=stack, others=repository_stacks(ROOT, stack))
    return [line.strip() for line in str(refused.value).splitlines()[1:] if line.strip().startswith("- ")]


def test_every_stack_of_the_repository_follows_the_rule_and_shares_nothing_with_another():
    stacks = repository_stacks(ROOT, "")
    assert set(stacks) == {s for s in available_stacks(ROOT) if "." not in s} and len(stacks) >= 4
    for name, config in stacks.items():
        assert stack_name_problem(name, config.environment) is None
        assert environment_of(name) in ENVIRONMENTS
    for (name, config), (_, other) in itertools.permutations(stacks.items(), 2):
        assert list(collisions(name, config, {"other": other})) == [], name


def test_a_copied_stack_file_is_refused_for_its_prefix_first():
    (first, *rest) = problems_of(copied("prod"), "prod-eu")
    assert first.startswith("- platform:prefix: give this stack a prefix of its own: 'ailab' in environment prod is ")
    assert "stacks/Pulumi.prod.yaml" in first and rest == []


def test_a_copy_with_its_own_prefix_is_refused_for_the_ranges_it_shares_through_the_hub():
    found = problems_of(copied("prod", prefix="ailabeu"), "prod-eu")
    assert [line.split(": ")[0] for line in found] == [
        "- platform:network.regions.eastus2.addressSpace",
        "- platform:network.regions.southcentralus.addressSpace",
    ]
    assert "VnetAddressSpaceOverlapsWithAlreadyPeeredVnet" in found[0]


def test_a_global_name_another_stack_has_is_refused_with_its_key():
    """dev peers with no hub, so a copy may reuse its ranges, never its accounts' names."""
    storage = json.loads(read_stack_config(ROOT, "dev").values["platform:storage"])
    account = next(iter(storage["accounts"]))
    taken = storage_account_name(repository_stacks(ROOT, "dev-eu")["dev"], account)
    storage["accounts"][account]["accountName"] = taken
    found = problems_of(copied("dev", prefix="ailabeu", storage=storage), "dev-eu")
    assert found == [
        f"- platform:storage.accounts.{account}.accountName: choose another name: {taken} is also "
        f"stacks/Pulumi.dev.yaml's (platform:storage.accounts.{account}), and Azure gives a global name once"
    ]


def test_a_copied_stack_files_preview_stops_before_anything_is_registered(tmp_path):
    """Through the CLI and the program (validation/loader.py, load_environment), as `pulumi up`."""
    project = copy_project(tmp_path / "repo")
    (project / "stacks" / "Pulumi.staging-eu.yaml").write_text((project / "stacks" / "Pulumi.staging.yaml").read_text())
    result = subprocess.run(
        [sys.executable, "scripts/preview.py", "--stack", "staging-eu", "--no-tree"],
        cwd=project,
        capture_output=True,
        text=True,
    )
    assert result.returncode == 1
    assert "Traceback" not in result.stdout + result.stderr
    lines = [line.strip() for line in result.stdout.splitlines() if line.strip()]
    assert lines[0] == "error: the staging-eu configuration has 1 problem; nothing was previewed:", result.stdout
    assert lines[1].startswith("- platform:prefix: give this stack a prefix of its own")
