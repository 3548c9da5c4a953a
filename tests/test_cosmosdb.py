"""Cosmos DB's consistency rules and data-role scopes (facts/cosmosdb.py, planning/cosmosdb.py)."""

from __future__ import annotations

import pytest

from facts.cosmosdb import DATA_ROLES, token_scope
from offline.plandiff import diff_resource
from planning.cosmosdb import consistency_problems, role_scope

ACCOUNT = "/subscriptions/s/resourceGroups/rg/providers/Microsoft.DocumentDB/databaseAccounts/cosmos-ailab-prod"


@pytest.mark.parametrize(
    "consistency, regions, multi_write, refused",
    [
        ("Session", 2, True, 0),
        ("Session", 1, False, 0),
        ("Strong", 1, False, 0),
        ("Strong", 2, False, 1),  # writes stop with either region
        ("Strong", 3, False, 0),
        ("Strong", 3, True, 1),  # Azure refuses it
        ("Strong", 2, True, 2),
        ("BoundedStaleness", 2, False, 0),
    ],
)
def test_a_consistency_and_write_regions_choice_is_refused_with_what_it_costs(
    consistency, regions, multi_write, refused
):
    assert len(consistency_problems(consistency, regions, multi_write)) == refused


def test_a_workloads_data_role_applies_at_the_narrowest_scope_config_names():
    assert role_scope(ACCOUNT) == ACCOUNT
    assert role_scope(ACCOUNT, "features") == f"{ACCOUNT}/dbs/features"
    assert role_scope(ACCOUNT, "features", "runs") == f"{ACCOUNT}/dbs/features/colls/runs"
    with pytest.raises(ValueError):
        role_scope(ACCOUNT, container="runs")
    assert DATA_ROLES["read"].endswith("1") and DATA_ROLES["readWrite"].endswith("2")
    assert token_scope("cosmos-ailab-prod") == "https://cosmos-ailab-prod.documents.azure.com/.default"


ACCOUNT_TYPE = "azure-native:cosmosdb:DatabaseAccount"


def _account(backup: str, zone_redundant: bool) -> dict:
    return {
        "urn": "urn:pulumi:prod.data::platform::platform:data:CosmosDb$azure-native:cosmosdb:DatabaseAccount::cosmos",
        "type": ACCOUNT_TYPE,
        "name": "cosmos",
        "inputs": {
            "accountName": "cosmos-ailab-prod",
            "backupPolicy": {"type": backup},
            "locations": [
                {"locationName": "eastus2", "failoverPriority": 0, "isZoneRedundant": True},
                {"locationName": "southcentralus", "failoverPriority": 1, "isZoneRedundant": zone_redundant},
            ],
        },
        "options": {"protect": True},
    }


def test_changes_azure_makes_only_one_way_are_findings_of_the_review_not_plain_updates():
    """Periodic to continuous backup cannot be undone, and Azure sets a region's zone redundancy
    only when the region is added: the provider sends both as updates, the review flags them."""
    backup = diff_resource("prod.data", _account("Periodic", True), _account("Continuous", True))
    assert backup is not None and backup.action == "update" and backup.finding
    assert [c.path for c in backup.one_way] == ["backupPolicy.type"] and "one-way" in backup.one_way[0].source
    zones = diff_resource("prod.data", _account("Continuous", True), _account("Continuous", False))
    assert zones is not None and [c.path for c in zones.one_way] == ["locations[name=southcentralus].isZoneRedundant"]
    assert "only when a region is added" in zones.one_way[0].source
    # Adding a region is an ordinary update.
    grown = _account("Continuous", True)
    grown["inputs"]["locations"].append({"locationName": "westus3", "failoverPriority": 2, "isZoneRedundant": True})
    added = diff_resource("prod.data", _account("Continuous", True), grown)
    assert added is not None and not added.finding and added.one_way == []
