"""Deletes under prod's delete locks: Azure refuses them with ScopeLocked mid-deploy
(MicrosoftDocs/azure-docs#110791), so the review predicts them, over the deploy's order of layers."""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import pytest

from offline.locks import LOCK
from offline.plandiff import diff_environment
from offline.review_report import Side, render

ROLE_ASSIGNMENT = "azure-native:authorization:RoleAssignment"


def edited(environment: dict[str, Any], stack: str, drop: Callable[[dict[str, Any]], bool]) -> dict[str, Any]:
    """The environment with the resources `drop` picks removed from `stack`."""
    result = copy.deepcopy(environment)
    resources = result["stacks"][stack]["resources"]
    kept = [r for r in resources if not drop(r)]
    assert len(kept) < len(resources), f"nothing dropped from {stack}"
    result["stacks"][stack]["resources"] = kept
    return result


def trainer_grant(resource: dict[str, Any]) -> bool:
    return resource["type"] == ROLE_ASSIGNMENT and resource["name"].startswith("workloads-trainer-storage-weights-")


def a_lock(*names: str) -> Callable[[dict[str, Any]], bool]:
    return lambda r: r["type"] == LOCK and r["name"] in names


@pytest.fixture(scope="module")
def prod(head_side) -> dict[str, Any]:
    return head_side["environments"]["prod"]


def test_removing_a_workloads_grants_in_prod_is_refused_by_the_data_locks_and_the_review_says_so(prod):
    """The trainer's blob grants live in tenants, on accounts the data layer locks: the deploy
    would stop on the first delete, so the review fails and names the lock and the way out."""
    head = edited(prod, "prod.tenants", trainer_grant)
    diff = diff_environment("prod", prod, head)
    locked = {(f.name, f.locked_by) for f in diff.findings}
    assert locked and all(lock and lock.startswith("prod.data: storage-weights") for _, lock in locked), locked
    assert {name for name, _ in locked} == {
        r["name"] for r in prod["stacks"]["prod.tenants"]["resources"] if trainer_grant(r)
    }
    report = render(
        Side("head", "h", {"environments": {"prod": head}}), Side("base", "b", {"environments": {"prod": prod}}), [diff]
    )
    assert not report.passed
    assert "ScopeLocked" in report.comment and "Removing access under a delete lock" in report.comment


def test_locks_lifted_by_an_upstream_layer_in_the_same_change_let_the_deletes_through(prod):
    """`platform:lockStatefulResources: false` with the removal: data deploys (its locks go)
    before tenants deletes the grants."""
    head = edited(prod, "prod.tenants", trainer_grant)
    head = edited(head, "prod.data", a_lock("storage-weights-lock", "storage-weights-scus-lock"))
    diff = diff_environment("prod", prod, head)
    assert [f.name for f in diff.findings] == []
    assert {r.name for r in diff.of("delete")} >= {"storage-weights-lock", "storage-weights-scus-lock"}


def test_a_lock_lifted_in_the_same_stack_as_the_delete_still_refuses_it(prod):
    """The Key Vault's lock and its secrets officer grant are both foundation's: Pulumi deletes
    them in parallel (no dependency between them), so the lift must deploy first, on its own."""

    def officer(r: dict[str, Any]) -> bool:  # the grant on the eus2 vault
        return r["type"] == ROLE_ASSIGNMENT and r["name"].startswith("keyvault-secrets-officer-")

    head = edited(prod, "prod.foundation", lambda r: officer(r) or a_lock("keyvault-lock")(r))
    (finding,) = diff_environment("prod", prod, head).findings
    assert finding.name.startswith("keyvault-secrets-officer-")
    assert finding.locked_by == "prod.foundation: keyvault-lock"


def test_a_lock_lifted_by_a_layer_that_deploys_alongside_does_not_count(prod):
    """A cluster's kubelet pulls from the registry that foundation locks: with foundation's lock
    gone first the cluster can go; data's locks are not upstream of a cluster, so lifting them
    changes nothing for it."""
    kubelet = lambda r: r["type"] == ROLE_ASSIGNMENT and r["name"] == "aks-eus2-kubelet-pulls"  # noqa: E731
    head = edited(prod, "prod.cluster-eus2", kubelet)
    (finding,) = diff_environment("prod", prod, head).findings
    assert finding.locked_by == "prod.foundation: registry-lock"
    lifted = edited(head, "prod.foundation", a_lock("registry-lock"))
    assert diff_environment("prod", prod, lifted).findings == []


def test_a_grant_the_program_retains_is_not_deleted_and_not_refused(prod):
    head = edited(prod, "prod.tenants", trainer_grant)
    base = copy.deepcopy(prod)
    for resource in base["stacks"]["prod.tenants"]["resources"]:
        if trainer_grant(resource):
            resource["options"]["retainOnDelete"] = True
    assert diff_environment("prod", base, head).findings == []
