"""The failure table (planning/resilience.py) against the plans of the multi-region stacks:
each claim about what the surviving region keeps must follow from where the plan puts every
dependency of its clusters' workloads."""

from __future__ import annotations

import pytest

from planning.resilience import FAILURE_TABLE, SCENARIOS, row
from tests.conftest import run_with, stack_values
from tests.support.plan_edits import changed
from tests.test_private_data import resource_id

ENDPOINT = "azure-native:network:PrivateEndpoint"
MULTI_REGION = ("prod", "prod-scale")
REGISTRY = "azure-native:containerregistry:Registry"
REPLICATION = "azure-native:containerregistry:Replication"
WORKSPACES = ("azure-native:operationalinsights:Workspace", "azure-native:monitor:AzureMonitorWorkspace")


def _regions(stack: str) -> list[str]:
    """The stack's cluster regions, the primary (the first cluster's) first."""
    return list(dict.fromkeys(c["region"] for c in stack_values(stack)["platform:clusters"].values()))


def _copies(plan) -> dict[str, set[str]]:
    """ARM ID -> the regions holding a serving copy of the resource: its own, and a registry's
    geo-replicas (active-active: pulls and pushes continue with the home region down)."""
    copies = {
        resource_id(r): {r.inputs["location"]} for r in plan.resources if isinstance(r.inputs.get("location"), str)
    }
    registries = {r.inputs["registryName"]: resource_id(r) for r in plan.of_type(REGISTRY)}
    for replica in plan.of_type(REPLICATION):
        copies[registries[replica.inputs["registryName"]]].add(replica.inputs["location"])
    return copies


def _targets(plan, group_ids: tuple[str, ...]) -> dict[str, list[str]]:
    """Each private-link target reached through these sub-resources -> its endpoints' regions."""
    targets: dict[str, list[str]] = {}
    for endpoint in plan.of_type(ENDPOINT):
        connection = endpoint.inputs["privateLinkServiceConnections"][0]
        if connection["groupIds"][0] in group_ids:
            targets.setdefault(connection["privateLinkServiceId"], []).append(endpoint.inputs["location"])
    return targets


def survives(plan, group_ids: tuple[str, ...], lost: str, region: str) -> bool:
    """Whether workloads in `region` still reach every target of these sub-resources when
    `lost` is down: through an endpoint in their own region, to a copy of the resource outside
    the lost region."""
    copies = _copies(plan)
    for target, endpoint_regions in _targets(plan, group_ids).items():
        if region not in endpoint_regions or not copies.get(target, set()) - {lost}:
            return False
    return True


def test_every_service_has_a_cell_for_every_scenario_and_says_why():
    for entry in FAILURE_TABLE:
        assert set(entry.cells) == set(SCENARIOS), entry.service
        for cell in entry.cells.values():
            assert cell.why and cell.rpo and cell.rto


@pytest.mark.parametrize("stack", MULTI_REGION)
@pytest.mark.parametrize("entry", [r for r in FAILURE_TABLE if r.group_ids], ids=lambda r: r.service.split(" (")[0])
def test_the_tables_data_plane_claims_follow_from_where_the_plan_puts_each_endpoint(plans, stack, entry):
    plan = plans[stack]
    assert _targets(plan, entry.group_ids), f"{entry.service}: nothing in {stack} is reached that way"
    primary, *others = _regions(stack)
    assert others, f"{stack} has one region"
    for other in others:
        # The primary is lost: what the other regions keep.
        assert (entry.cells["primary"].status != "lost") == survives(plan, entry.group_ids, primary, other), (
            stack,
            entry.service,
            "primary",
        )
        # Another region is lost: what the primary keeps.
        assert (entry.cells["secondary"].status != "lost") == survives(plan, entry.group_ids, other, primary), (
            stack,
            entry.service,
            "secondary",
        )


@pytest.mark.parametrize("stack", MULTI_REGION)
def test_the_tables_monitoring_claims_follow_from_where_the_workspaces_are(plans, stack):
    primary, *_ = _regions(stack)
    locations = {r.inputs["location"] for t in WORKSPACES for r in plans[stack].of_type(t)}
    assert locations
    only_in_primary = locations == {primary}
    assert (row("Monitoring").cells["primary"].status == "lost") == only_in_primary


@pytest.mark.parametrize("stack", MULTI_REGION)
def test_no_job_moves_between_regions_until_a_dispatcher_exists(plans, stack):
    multikueue = [r for r in plans[stack].resources if "MultiKueue" in r.type]
    assert (row("Training").cells["primary"].status == "lost") == (not multikueue)


def test_an_endpoint_moved_to_the_other_region_contradicts_the_table(plans):
    """The check bites: with the primary's vault endpoint moved to the other region (as all were
    before every region had its own), the primary's clusters lose the vault when that region
    fails, which the table says they keep."""
    plan = plans["prod"]
    primary, other = _regions("prod")
    vault = row("Key Vault")
    assert vault.cells["secondary"].status == "keeps" and survives(plan, vault.group_ids, other, primary)
    (endpoint,) = [
        e
        for e in plan.of_type(ENDPOINT)
        if e.inputs["privateLinkServiceConnections"][0]["groupIds"] == ["vault"] and e.inputs["location"] == primary
    ]
    moved = changed(plan, endpoint.name, inputs={**endpoint.inputs, "location": other})
    assert not survives(moved, vault.group_ids, other, primary)


# --- A workload that fails over: known where it lands ------------------------------------------

CREDENTIAL = "azure-native:managedidentity:FederatedIdentityCredential"
KAFKA_USER = "kubernetes:kafka.strimzi.io/v1:KafkaUser"
SERVICE_ACCOUNT = "kubernetes:core/v1:ServiceAccount"


def _pinned_with_failover(values):
    values["platform:workloads"]["trainer"]["clusters"] = ["eus2"]
    values["platform:workloads"]["trainer"]["failoverClusters"] = ["scus"]


def test_a_workload_that_fails_over_can_sign_in_and_reach_kafka_where_it_lands():
    """trainer runs on eus2 only; when eus2 is lost it is restarted on scus. Its identity must
    already trust scus's issuer, its service account and KafkaUser must exist there, and its
    connection info must say what to read there: each topic and eus2's copy of it, where
    MirrorMaker synced its group's offsets."""
    plan = run_with("prod", _pinned_with_failover)
    assert plan.ok, plan.error
    credentials = sorted(c.name for c in plan.of_type(CREDENTIAL) if c.name.startswith("workloads-trainer-"))
    assert credentials == ["workloads-trainer-eus2", "workloads-trainer-scus"]
    accounts = [a for a in plan.of_type(SERVICE_ACCOUNT) if a.inputs["metadata"]["name"] == "trainer"]
    assert sorted(a.name.split("-")[1] for a in accounts) == ["eus2", "scus"]
    users = [u for u in plan.of_type(KAFKA_USER) if u.name.startswith("kafka-scus-")]
    assert any((u.inputs["metadata"].get("labels") or {}).get("platform.ai/workload") == "trainer" for u in users)
    info = plan.outputs["kafkaClients"]["trainer"]
    assert list(info["bootstrapServers"]) == ["eus2"]
    assert info["failover"] == {
        "scus": {
            "bootstrapServers": "scus-kafka-bootstrap.kafka.svc:9093",
            "autoOffsetReset": "earliest",
            "topics": {"model-registry": ["model-registry", "eus2.model-registry"]},
        }
    }


def test_failover_clusters_must_be_other_clusters():
    from tests.test_config_errors import expect_problem, set_in

    expect_problem(
        "prod",
        set_in("workloads.trainer.failoverClusters", ["eus2"]),
        "platform:workloads.trainer.failoverClusters[0]",
        "already one it runs on",
    )
    expect_problem(
        "prod",
        set_in("workloads.trainer.failoverClusters", ["west"]),
        "platform:workloads.trainer.failoverClusters[0]",
        "not a cluster",
    )


@pytest.mark.parametrize("stack", MULTI_REGION)
def test_every_region_with_clusters_reaches_each_data_plane_resource_through_its_own_endpoint(plans, stack):
    """Decision 0008: an endpoint of every data-plane resource in every region with clusters,
    each registered in that region's own zones, and no VNet linked to two zones of one name
    (Azure refuses the second)."""
    plan = plans[stack]
    regions = set(_regions(stack))
    for entry in (r for r in FAILURE_TABLE if r.group_ids):
        for target, endpoint_regions in _targets(plan, entry.group_ids).items():
            assert regions <= set(endpoint_regions), (entry.service, target)
    linked: dict[tuple[str, str], int] = {}
    zones_of_vnet: set[tuple[str, str, str]] = set()  # (VNet ID, zone resource group, zone name)
    for link in plan.of_type("azure-native:privatedns:VirtualNetworkLink"):
        vnet, zone = str(link.inputs["virtualNetwork"]["id"]), str(link.inputs["privateZoneName"])
        linked[(vnet, zone)] = linked.get((vnet, zone), 0) + 1
        zones_of_vnet.add((vnet, str(link.inputs["resourceGroupName"]), zone))
    assert linked and max(linked.values()) == 1, [k for k, n in linked.items() if n > 1]
    # Each endpoint's records go into the zone its own region's VNet resolves through.
    vnet_of = {v.inputs["location"]: resource_id(v) for v in plan.of_type("azure-native:network:VirtualNetwork")}
    groups = {str(g.inputs["privateEndpointName"]): g for g in plan.of_type("azure-native:network:PrivateDnsZoneGroup")}
    for endpoint in plan.of_type(ENDPOINT):
        zone_id = groups[endpoint.inputs["privateEndpointName"]].inputs["privateDnsZoneConfigs"][0]["privateDnsZoneId"]
        zone_group, zone_name = zone_id.split("/resourceGroups/")[1].split("/")[0], zone_id.rsplit("/", 1)[-1]
        assert (vnet_of[endpoint.inputs["location"]], zone_group, zone_name) in zones_of_vnet, endpoint.name
