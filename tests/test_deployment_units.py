"""The mapping of today's single-stack plan onto deployment units (planning/layers.py): every
resource of every stack in exactly one unit, each cluster's resources in its own unit, and the
permissions each layer will need kept narrow (issue: deployment units sized for a fleet)."""

from __future__ import annotations

from collections import Counter

import pytest

from planning.layers import LAYERS, Unit, UnmappedResource, is_deployed_resource, unit_of, units_of
from tests.conftest import ALL_STACKS, stack_values

# The in-cluster kinds the tenants layer writes: its custom in-cluster role grants exactly these
# (never cluster-admin).
TENANT_KINDS = {
    "kubernetes:core/v1:Namespace",
    "kubernetes:core/v1:ServiceAccount",
    "kubernetes:core/v1:ServiceAccountPatch",
    "kubernetes:core/v1:Secret",
    "kubernetes:networking.k8s.io/v1:NetworkPolicy",
    "kubernetes:cilium.io/v2:CiliumNetworkPolicy",
    "kubernetes:kueue.x-k8s.io/v1beta2:ClusterQueue",
    "kubernetes:kueue.x-k8s.io/v1beta2:LocalQueue",
    "kubernetes:kafka.strimzi.io/v1:KafkaTopic",
    "kubernetes:kafka.strimzi.io/v1:KafkaUser",
    "kubernetes:kafka.strimzi.io/v1:KafkaMirrorMaker2",
}


def _clusters(stack: str) -> list[str]:
    return list(stack_values(stack)["platform:clusters"])


@pytest.mark.parametrize("stack", ALL_STACKS)
def test_every_resource_belongs_to_exactly_one_unit(plans, stack):
    plan = plans[stack]
    clusters = _clusters(stack)
    units = units_of(plan.resources, clusters)
    deployed = [r for r in plan.resources if is_deployed_resource(r)]
    assert len(units) == len(deployed) == len({r.urn for r in deployed})
    layers = Counter(unit.layer for unit in units.values())
    expected = {"foundation", "cluster", "tenants"} | ({"fleet"} if len(clusters) > 1 else set())
    expected |= {"data"} if stack_values(stack).get("platform:storage", {}).get("accounts") else set()
    assert set(layers) == expected, layers
    assert {unit.cluster for unit in units.values() if unit.layer == "cluster"} == set(clusters)
    assert all(unit.cluster == "" for unit in units.values() if unit.layer != "cluster")


@pytest.mark.parametrize("stack", ALL_STACKS)
def test_a_cluster_unit_holds_its_own_cluster_only(plans, stack):
    plan = plans[stack]
    units = units_of(plan.resources, _clusters(stack))
    for resource in plan.resources:
        unit = units.get(resource.urn)
        if resource.type == "azure-native:containerservice:ManagedCluster":
            assert unit == Unit("cluster", resource.name.removeprefix("aks-").removesuffix("-aks")), resource.name
        if resource.type.startswith("kubernetes:") and unit is not None and unit.layer == "cluster":
            # In-cluster objects go through their cluster's provider (`aks-<key>-k8s`).
            assert f"::aks-{unit.cluster}-k8s::" in (resource.provider or ""), (resource.name, resource.provider)


@pytest.mark.parametrize("stack", ALL_STACKS)
def test_only_cluster_and_tenants_write_inside_clusters_and_tenants_only_its_kinds(plans, stack):
    plan = plans[stack]
    units = units_of(plan.resources, _clusters(stack))
    inside = Counter(
        (units[r.urn].layer, r.type) for r in plan.resources if r.type.startswith("kubernetes:") and r.urn in units
    )
    assert {layer for layer, _ in inside} <= {"cluster", "tenants"}
    assert {kind for layer, kind in inside if layer == "tenants"} <= TENANT_KINDS


@pytest.mark.parametrize("stack", ["staging", "prod"])
def test_only_the_foundation_writes_into_the_hubs_subscription(plans, stack):
    plan = plans[stack]
    units = units_of(plan.resources, _clusters(stack))
    hub_providers = {
        r.urn for r in plan.resources if r.type == "pulumi:providers:azure-native" and r.inputs.get("subscriptionId")
    }
    in_hub = [r for r in plan.resources if r.provider and r.provider.rsplit("::", 1)[0] in hub_providers]
    assert in_hub, "staging and prod peer with the hub and link its zones"
    assert {units[r.urn] for r in in_hub} == {Unit("foundation")}


def test_an_unmapped_component_is_an_error_not_a_guess(plans):
    plan = plans["dev"]
    by_urn = {r.urn: r for r in plan.resources}
    resource = next(r for r in plan.resources if r.type == "azure-native:containerservice:ManagedCluster")
    with pytest.raises(UnmappedResource, match="no cluster"):
        unit_of(resource, by_urn, ["other"])


def test_unit_stacks_are_named_after_the_environment():
    assert Unit("foundation").stack("prod") == "prod.foundation"
    assert Unit("cluster", "eus2").stack("prod") == "prod.cluster-eus2"
    assert LAYERS == ("foundation", "data", "cluster", "tenants", "fleet")
