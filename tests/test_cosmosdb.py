"""Cosmos DB's consistency rules and data-role scopes (facts/cosmosdb.py, planning/cosmosdb.py)."""

from __future__ import annotations

import pytest

from facts.cosmosdb import DATA_ROLES, token_scope
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
