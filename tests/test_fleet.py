"""Fleets beyond one cluster: Fleet Manager owns upgrades, and the 7,500-node fleet plans."""

from __future__ import annotations

import pytest

from offline.engine import preview_stack
from offline.inputs import input_problems
from planning.capacity import plan_capacity
from tests.conftest import ROOT
from validation.loader import parse_platform_config
from validation.stackfile import read_stack_config

FLEET = "azure-native:containerservice:Fleet"
MEMBER = "azure-native:containerservice:FleetMember"
STRATEGY = "azure-native:containerservice:FleetUpdateStrategy"
AUTO_UPGRADE = "azure-native:containerservice:AutoUpgradeProfile"


@pytest.fixture(scope="module")
def scale_plan():
    plan = preview_stack("prod-scale")
    assert plan.ok, plan.error
    return plan


def test_single_cluster_environments_have_no_fleet(plans):
    for stack in ("dev", "staging"):
        assert not plans[stack].of_type(FLEET)


def test_prod_clusters_join_one_fleet_that_upgrades_the_canary_first(plans):
    plan = plans["prod"]
    fleet = plan.one(FLEET)
    members = {m.inputs["fleetMemberName"]: m for m in plan.of_type(MEMBER)}
    # The dispatchers (platform:jobs) are upgraded with the rest, after the canary.
    assert set(members) == {"eus2", "scus", "dispeus2", "dispscus"}
    assert members["eus2"].inputs["group"] == "canary"
    assert {members[k].inputs["group"] for k in ("scus", "dispeus2", "dispscus")} == {"rest"}
    for key, member in members.items():
        assert member.inputs["clusterResourceId"].endswith(f"/managedClusters/aks-ailab-prod-{key}")
        assert member.inputs["fleetName"] == fleet.inputs["fleetName"]
    strategy = plan.one(STRATEGY)
    stages = strategy.inputs["strategy"]["stages"]
    assert [[g["name"] for g in stage["groups"]] for stage in stages] == [["canary"], ["rest"]]
    assert stages[0]["afterStageWaitInSeconds"] == 24 * 3600
    profile = plan.one(AUTO_UPGRADE)
    assert profile.inputs["channel"] == "Stable" and profile.inputs["disabled"] is False
    assert profile.inputs["updateStrategyId"].endswith("/updateStrategies/canary-first")
    assert profile.inputs["nodeImageSelection"] == {"type": "Consistent"}
    for resource in (fleet, strategy, profile, *members.values()):
        assert input_problems(resource) == [], resource.name


def test_the_scale_fleet_passes_the_planner_with_7500_gpu_nodes():
    config = parse_platform_config(read_stack_config(ROOT, "prod-scale").values)
    capacity = plan_capacity(config)
    # The two GPU clusters, and a MultiKueue dispatcher per region (six system nodes at most).
    assert len(capacity.clusters) == 4
    assert capacity.gpu_nodes >= 7500
    assert all(cluster.max_nodes <= 5000 for cluster in capacity.clusters)
    assert all(use.fits for cluster in capacity.clusters for use in cluster.address_uses)
    assert capacity.summary().startswith("clusters 4 · max nodes 7,876 · GPU nodes 7,600 · GPUs 60,800 H100")


def test_the_scale_fleet_previews_with_one_agent_pool_per_pool_not_per_node(scale_plan):
    pools = scale_plan.of_type("azure-native:containerservice:AgentPool")
    assert len(pools) == 16  # 2 clusters x (cpu + 3 Kafka + 4 GPU pools); dispatchers have a system pool only
    assert sum(p.inputs["maxCount"] for p in pools if "gpuProfile" in p.inputs) == 7600
    assert len(scale_plan.of_type(MEMBER)) == 4
    # Nodes never become resources: the same fleet at ten nodes per GPU pool registers exactly
    # as many resources as at 7,600 nodes.
    from tests.conftest import run_with

    def small(values):
        for cluster in values["platform:clusters"].values():
            for pool in cluster.get("gpuPools", {}).values():
                pool["maxCount"] = 10
                pool["quotas"] = dict.fromkeys(pool["quotas"], 8)

    small_fleet = run_with("prod-scale", small)
    assert small_fleet.ok, small_fleet.error
    assert len(small_fleet.resources) == len(scale_plan.resources)


def test_the_benchmarks_synthetic_fleet_is_a_valid_config():
    """`make bench` previews it; a config the planner rejects would time an error message."""
    import sys

    sys.path.insert(0, str(ROOT / "scripts"))
    from bench import synthetic_fleet, synthetic_stack

    values = synthetic_fleet(50)
    from validation.stackfile import as_cli_string

    raw = {k: as_cli_string(v) for k, v in values.items()}
    capacity = plan_capacity(parse_platform_config(raw, stack=synthetic_stack(50)))
    assert len(capacity.clusters) == 50 and capacity.gpu_nodes == 50_000
