"""The failure table (planning/resilience.py) against the plans of the multi-region stacks:
each claim about what the surviving region keeps must follow from where the plan puts every
dependency of its clusters' workloads."""

from __future__ import annotations

import pytest

from facts.azure_regions import PAIRED_REGIONS
from planning import cosmosdb as cosmos_plan
from planning.resilience import FAILURE_TABLE, SCENARIOS, row
from stackconfig.model import GEO_REDUNDANT_STORAGE
from tests.conftest import run_with, stack_values, without_kafka_lag_scaling
from tests.support.plan_edits import changed
from tests.test_private_data import resource_id

ENDPOINT = "azure-native:network:PrivateEndpoint"
MULTI_REGION = ("prod", "prod-scale")
REGISTRY = "azure-native:containerregistry:Registry"
REPLICATION = "azure-native:containerregistry:Replication"
OBJECT_REPLICATION = "azure-native:storage:ObjectReplicationPolicy"
STORAGE = "azure-native:storage:StorageAccount"
COSMOS = "azure-native:cosmosdb:DatabaseAccount"
MANAGED_CLUSTER = "azure-native:containerservice:ManagedCluster"
WORKSPACES = ("azure-native:operationalinsights:Workspace", "azure-native:monitor:AzureMonitorWorkspace")


def _regions(stack: str) -> list[str]:
    """The stack's cluster regions, the primary (the first cluster's) first."""
    return list(dict.fromkeys(c["region"] for c in stack_values(stack)["platform:clusters"].values()))


def _copies(plan) -> dict[str, set[str]]:
    """ARM ID -> the regions holding a serving copy of the resource: its own, a registry's
    geo-replicas (active-active: pulls and pushes continue with the home region down), and a
    geo-redundant account's paired region (where a customer-managed failover moves it)."""
    copies = {
        resource_id(r): {r.inputs["location"]} for r in plan.resources if isinstance(r.inputs.get("location"), str)
    }
    registries = {r.inputs["registryName"]: resource_id(r) for r in plan.of_type(REGISTRY)}
    for replica in plan.of_type(REPLICATION):
        copies[registries[replica.inputs["registryName"]]].add(replica.inputs["location"])
    for account in plan.of_type(STORAGE):
        if account.inputs["sku"]["name"] in GEO_REDUNDANT_STORAGE:
            copies[resource_id(account)].add(PAIRED_REGIONS[account.inputs["location"]])
    # A Cosmos DB account serves from each of its regions (a read replica, promoted on failover).
    for account in plan.of_type(COSMOS):
        copies[resource_id(account)] |= {location["locationName"] for location in account.inputs["locations"]}
    return copies


def _alternatives(plan, targets) -> list[set[str]]:
    """The dependencies behind these targets, each as the resources that can serve it: an
    account and its object-replication replica; every region's Key Vault (each cluster is
    told to use its own region's: test_each_cluster_is_told_its_own_regions_vault_and_copies)."""
    groups = [{target} for target in targets]
    pairs = [(p.inputs["sourceAccount"], p.inputs["destinationAccount"]) for p in plan.of_type(OBJECT_REPLICATION)]
    vaults = {t for t in targets if "/Microsoft.KeyVault/vaults/" in t}
    merged: list[set[str]] = []
    for group in groups:
        (target,) = group
        for source, destination in pairs:
            if target in (source, destination):
                group |= {source, destination}
        if target in vaults:
            group |= vaults
        if group not in merged:
            merged.append(group)
    return merged


def _site_baselines(plan) -> set[str]:
    """IDs of the accounts a site's Flux reads its baseline from: only that site reads them, in its
    region (components/arc_site.py); the failure table's rows are the workloads' data."""
    names = {
        str(r.inputs["azureBlob"]["url"]).removeprefix("https://").split(".", 1)[0]
        for r in plan.of_type("azure-native:kubernetesconfiguration:FluxConfiguration")
    }
    return {
        resource_id(r) for r in plan.of_type("azure-native:storage:StorageAccount") if r.inputs["accountName"] in names
    }


def _targets(plan, group_ids: tuple[str, ...]) -> dict[str, list[str]]:
    """Each private-link target reached through these sub-resources -> its endpoints' regions."""
    targets: dict[str, list[str]] = {}
    baselines = _site_baselines(plan)
    for endpoint in plan.of_type(ENDPOINT):
        connection = endpoint.inputs["privateLinkServiceConnections"][0]
        if connection["privateLinkServiceId"] in baselines:
            continue
        if connection["groupIds"][0] in group_ids:
            targets.setdefault(connection["privateLinkServiceId"], []).append(endpoint.inputs["location"])
    return targets


def survives(plan, group_ids: tuple[str, ...], lost: str, region: str) -> bool:
    """Whether workloads in `region` still reach every target of these sub-resources when
    `lost` is down: through an endpoint in their own region, to a copy of the resource outside
    the lost region."""
    copies, targets = _copies(plan), _targets(plan, group_ids)
    for alternatives in _alternatives(plan, targets):
        if not any(region in targets.get(a, []) and copies.get(a, set()) - {lost} for a in alternatives):
            return False
    return True


def test_every_service_has_a_cell_for_every_scenario_and_says_why():
    for entry in FAILURE_TABLE:
        assert set(entry.cells) == set(SCENARIOS), entry.service
        for cell in entry.cells.values():
            assert cell.why and cell.rpo and cell.rto


@pytest.mark.parametrize("stack", MULTI_REGION)
@pytest.mark.parametrize(
    # Event Hubs: multi-region stacks run Strimzi; its row is checked on prod moved to Event Hubs.
    "entry",
    [r for r in FAILURE_TABLE if r.group_ids and not r.service.startswith("Event Hubs")],
    ids=lambda r: r.service.split(" (")[0],
)
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
def test_the_tables_cosmos_db_rpo_is_azures_for_the_accounts_consistency_and_regions(plans, stack):
    """The row's RPO is Azure's for the account the plan builds (consistency, regions), and its
    primary-loss claim needs automatic failover and a single write region."""
    (account,) = plans[stack].of_type(COSMOS)
    regions = len(account.inputs["locations"])
    consistency = account.inputs["consistencyPolicy"]["defaultConsistencyLevel"]
    assert row("Cosmos DB").cells["primary"].rpo == cosmos_plan.rpo(consistency, regions)
    assert account.inputs["enableAutomaticFailover"] is True and account.inputs["enableMultipleWriteLocations"] is False
    assert [loc["failoverPriority"] for loc in account.inputs["locations"]] == list(range(regions))
    assert account.inputs["locations"][0]["locationName"] == _regions(stack)[0]


@pytest.mark.parametrize("stack", MULTI_REGION)
def test_the_tables_monitoring_claims_follow_from_where_the_workspaces_are(plans, stack):
    """Each cluster's metrics (its data collection rule) and logs (its diagnostic setting) go to
    workspaces in its own region, so the surviving region keeps reporting: what the table says
    unless a cluster reports across regions."""
    plan = plans[stack]
    located = {resource_id(r): r.inputs["location"] for t in WORKSPACES for r in plan.of_type(t)}
    clusters = {resource_id(c): c.inputs["location"] for c in plan.of_type(MANAGED_CLUSTER)}
    crosses = []
    for rule in plan.of_type("azure-native:monitor:DataCollectionRule"):
        for destination in rule.inputs["destinations"].get("monitoringAccounts", []):
            if located[destination["accountResourceId"]] != rule.inputs["location"]:
                crosses.append(rule.name)
    for setting in plan.of_type("azure-native:monitor:DiagnosticSetting"):
        region = clusters.get(setting.inputs["resourceUri"])
        if region and located[setting.inputs["workspaceId"]] != region:
            crosses.append(setting.name)
    for rule in plan.of_type("azure-native:monitor:DataCollectionRule"):
        assert rule.inputs["location"] in set(clusters.values())
    assert (row("Monitoring").cells["primary"].status == "lost") == bool(crosses), crosses


def _dispatch_survives(plan, stack: str, lost: str) -> bool:
    """Whether a job submitted while `lost` is down still runs: a dispatcher outside it hands
    jobs to a worker outside it (tests/test_dispatch.py checks that the hand-over works)."""
    clusters = stack_values(stack)["platform:clusters"]
    for config in plan.of_type("kubernetes:kueue.x-k8s.io/v1beta2:MultiKueueConfig"):
        dispatcher = config.provider.split("::")[-2].removeprefix("aks-").removesuffix("-k8s")
        if clusters[dispatcher]["region"] != lost and any(
            clusters[w]["region"] != lost for w in config.inputs["spec"]["clusters"]
        ):
            return True
    return False


@pytest.mark.parametrize("stack", MULTI_REGION)
def test_the_tables_job_claims_follow_from_where_the_dispatchers_and_workers_are(plans, stack):
    primary, other = _regions(stack)
    training = row("Training")
    assert (training.cells["primary"].status != "lost") == _dispatch_survives(plans[stack], stack, primary)
    assert (training.cells["secondary"].status != "lost") == _dispatch_survives(plans[stack], stack, other)


def test_with_one_dispatcher_a_job_submitted_while_its_region_is_down_does_not_run():
    """The check bites: prod with its eastus2 dispatcher only has nowhere to submit when eastus2 is lost."""

    def one_dispatcher(values):
        values["platform:jobs"]["dispatchers"] = ["dispeus2"]
        del values["platform:clusters"]["dispscus"]

    plan = run_with("prod", one_dispatcher)
    assert plan.ok, plan.error
    primary, other = _regions("prod")
    assert _dispatch_survives(plan, "prod", other) and not _dispatch_survives(plan, "prod", primary)


def test_an_endpoint_moved_to_the_other_region_contradicts_the_table(plans):
    """The check bites: with the primary's vault endpoint moved to the other region (as all were
    before every region had its own), the primary's clusters lose the vault when that region
    fails, which the table says they keep."""
    plan = plans["prod"]
    primary, other = _regions("prod")
    vault = row("Key Vault")
    assert vault.cells["secondary"].status == "keeps" and survives(plan, vault.group_ids, other, primary)
    # The primary vault's endpoint in the primary region.
    endpoint = plan.one(ENDPOINT, "keyvault-pe-vault")
    assert endpoint.inputs["location"] == primary
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
    # The hub's shared zones are linked by the hub's owner, as the stack output hubRequests asks.
    hub = stack_values(stack)["platform:network"].get("hub") or {}
    if hub.get("privateDnsZonesResourceGroupId"):
        hub_group = hub["privateDnsZonesResourceGroupId"].rsplit("/", 1)[-1]
        for zone, vnets in plan.outputs["hubRequests"]["dnsLinks"].items():
            assert not {(str(v), zone) for v in vnets} & set(linked), "linked twice"
            zones_of_vnet |= {(str(vnet), hub_group, zone) for vnet in vnets}
    # Each endpoint's records go into the zone its own region's VNet resolves through.
    vnet_of = {v.inputs["location"]: resource_id(v) for v in plan.of_type("azure-native:network:VirtualNetwork")}
    groups = {str(g.inputs["privateEndpointName"]): g for g in plan.of_type("azure-native:network:PrivateDnsZoneGroup")}
    for endpoint in plan.of_type(ENDPOINT):
        zone_id = groups[endpoint.inputs["privateEndpointName"]].inputs["privateDnsZoneConfigs"][0]["privateDnsZoneId"]
        zone_group, zone_name = zone_id.split("/resourceGroups/")[1].split("/")[0], zone_id.rsplit("/", 1)[-1]
        assert (vnet_of[endpoint.inputs["location"]], zone_group, zone_name) in zones_of_vnet, endpoint.name


@pytest.mark.parametrize("stack", MULTI_REGION)
def test_each_cluster_is_told_its_own_regions_vault_and_copies(plans, stack):
    """What the table's data-plane claims assume: a cluster uses the vault of its own region and
    reads the copy of each account in its region where there is one."""
    plan = plans[stack]
    context = plan.outputs["workloadContext"]
    vaults = {v.inputs["vaultName"]: v.inputs["location"] for v in plan.of_type("azure-native:keyvault:Vault")}
    accounts = {a.inputs["accountName"]: a.inputs["location"] for a in plan.of_type(STORAGE)}
    for key, cluster in stack_values(stack)["platform:clusters"].items():
        if cluster.get("role") == "dispatch":
            assert key not in context["clusters"], "a dispatcher runs no workloads"
            continue
        told = context["clusters"][key]
        vault = told["keyVaultUri"].removeprefix("https://").split(".")[0]
        assert vaults[vault] == cluster["region"], (key, vault)
        for account, copy in told["storageAccounts"].items():
            source = context["storageAccounts"][account]["name"]
            assert accounts[copy["name"]] == cluster["region"] or copy["name"] == source, (key, account)
            assert copy["readOnly"] == (copy["name"] != source)


def test_without_the_weights_replica_the_other_region_loses_its_weights(plans):
    """Dropping the replica contradicts the table: the other region's clusters would read
    weights from an account that lives only in the lost region."""
    storage = row("Storage")
    assert storage.cells["primary"].status != "lost"
    primary, other = _regions("prod")
    assert survives(plans["prod"], storage.group_ids, primary, other)

    def no_replica(values):
        values["platform:storage"]["accounts"]["weights"]["replication"] = "none"
        del values["platform:storage"]["accounts"]["weights"]["writtenInEveryRegion"]

    plan = run_with("prod", no_replica)
    assert plan.ok, plan.error
    assert not plan.of_type(OBJECT_REPLICATION)
    assert not survives(plan, storage.group_ids, primary, other)
    assert len(plan.of_type(STORAGE)) == len(plans["prod"].of_type(STORAGE)) - 1


# --- Data that survives: the replication choices Azure would refuse --------------------------

REPLICATION_CONTRADICTIONS = [
    # Object replication copies flat-namespace accounts only.
    (
        [("storage.accounts.datasets.replication", "objectReplication")],
        "platform:storage.accounts.datasets.replication",
        ("platform:storage.accounts.datasets.hierarchicalNamespace",),
    ),
    # A failover needs a geo-redundant copy: the account's own sku names it...
    (
        [("storage.accounts.datasets.sku", "Standard_ZRS")],
        "platform:storage.accounts.datasets.replication",
        ("platform:storage.accounts.datasets.sku is Standard_ZRS",),
    ),
    # ...or the environment's, when the account has none.
    (
        [("storage.accounts.weights.replication", "geoFailover")],
        "platform:storage.accounts.weights.replication",
        ("platform:storage.sku is Standard_ZRS",),
    ),
    # The Flink checkpoint account is named as the user wrote it.
    (
        [("streaming.checkpoints.sku", "Standard_ZRS")],
        "platform:streaming.checkpoints.replication",
        ("platform:streaming.checkpoints.sku", "Standard_ZRS"),
    ),
    (
        [("storage.accounts.weights.replicaRegion", "eastus2")],
        "platform:storage.accounts.weights.replicaRegion",
        ("the account's own region",),
    ),
    (
        [("storage.accounts.weights.replicaRegion", "westus3")],
        "platform:storage.accounts.weights.replicaRegion",
        ("no clusters",),
    ),
    (
        [("storage.accounts.datasets.replicaAccountName", "stailabproddscopy")],
        "platform:storage.accounts.datasets.replicaAccountName",
        ("objectReplication only", "platform:storage.accounts.datasets.replication is geoFailover"),
    ),
    # A container written in every region is one of the account's, on a replicated account.
    (
        [("storage.accounts.weights.writtenInEveryRegion", ["logs"])],
        "platform:storage.accounts.weights.writtenInEveryRegion",
        ("logs is not one of platform:storage.accounts.weights.containers",),
    ),
    (
        [("storage.accounts.datasets.writtenInEveryRegion", ["raw"])],
        "platform:storage.accounts.datasets.writtenInEveryRegion",
        ("objectReplication only",),
    ),
    (
        [("storage.accounts.weights.replicaAccountName", "stailabprodweights")],
        "platform:storage.accounts.weights.replicaAccountName",
        ("already the name of account weights",),
    ),
]


@pytest.mark.parametrize("changes, problem_key, reason", REPLICATION_CONTRADICTIONS, ids=lambda v: str(v)[:60])
def test_contradictory_replication_choices_name_their_keys(changes, problem_key, reason):
    from tests.test_config_errors import expect_problem, set_in

    def change(values):
        for path, value in changes:
            set_in(path, value)(values)

    expect_problem("prod", change, problem_key, *reason)


def test_a_replica_needs_another_region_and_a_failover_a_paired_region():
    from tests.test_config_errors import expect_problem, set_in

    # dev has one region: no region for a replica.
    expect_problem(
        "dev",
        set_in("storage.accounts.weights.replication", "objectReplication"),
        "platform:storage.accounts.weights.replication",
        "needs a region with clusters besides",
    )
    # Italy North has no pair (facts/azure_regions.py).

    def in_italy(values):
        for cluster in values["platform:clusters"].values():
            cluster["region"] = "italynorth"
        values["platform:network"]["regions"] = {"italynorth": values["platform:network"]["regions"]["eastus2"]}
        values["platform:storage"]["accounts"]["datasets"]["replication"] = "geoFailover"
        values["platform:storage"]["accounts"]["datasets"]["sku"] = "Standard_GZRS"

    expect_problem("dev", in_italy, "platform:storage.accounts.datasets.replication", "no paired region")


def test_on_event_hubs_the_other_region_loses_kafka_with_the_primary():
    """The table's Event Hubs row: one namespace in the primary region, which the other region
    reaches through its own endpoint but loses with the primary (no geo-replication built)."""

    def on_event_hubs(values):
        values["platform:kafka"]["engine"] = "eventhubs"
        values["platform:kafka"].pop("strimzi")
        for job in values["platform:streaming"]["jobs"].values():
            job.pop("topics", None)
        without_kafka_lag_scaling(values)

    plan = run_with("prod", on_event_hubs)
    assert plan.ok, plan.error
    hubs = row("Event Hubs")
    primary, other = _regions("prod")
    assert _targets(plan, hubs.group_ids)
    assert (hubs.cells["primary"].status == "lost") == (not survives(plan, hubs.group_ids, primary, other))
    assert (hubs.cells["secondary"].status != "lost") == survives(plan, hubs.group_ids, other, primary)


def test_without_the_registrys_replica_the_other_region_stops_pulling(plans):
    """Dropping the registry's replica in the other region contradicts the registry's row: the
    other region's endpoint then leads to a registry that lives only in the lost region."""
    from tests.support.plan_edits import without

    registry = row("Container registry")
    primary, other = _regions("prod")
    assert registry.cells["primary"].status != "lost"
    assert survives(plans["prod"], registry.group_ids, primary, other)
    (replica,) = plans["prod"].of_type(REPLICATION)
    assert not survives(without(plans["prod"], replica.name), registry.group_ids, primary, other)


@pytest.mark.parametrize("stack", MULTI_REGION)
def test_object_replication_is_written_as_azure_and_the_provider_can_track_it(plans, stack):
    """Destination first, with every container of both sides there; one GUID policy name on both
    accounts (a destination written as `default` is renamed by Azure, which the provider's
    resource ID would not follow); the source repeats the rule IDs the destination was given;
    full resource IDs (cross-tenant replication is off)."""
    import uuid

    plan = plans[stack]
    policies = plan.of_type(OBJECT_REPLICATION)
    assert len(policies) == 2
    (destination,) = [p for p in policies if p.name.endswith("-destination")]
    (source,) = [p for p in policies if p.name.endswith("-source")]
    for policy in policies:
        uuid.UUID(policy.inputs["objectReplicationPolicyId"])
        assert policy.inputs["sourceAccount"].startswith("/subscriptions/")
        assert policy.inputs["destinationAccount"].startswith("/subscriptions/")
    assert source.inputs["objectReplicationPolicyId"] == destination.inputs["objectReplicationPolicyId"]
    assert destination.inputs["accountName"] == destination.inputs["destinationAccount"].rsplit("/", 1)[-1]
    assert source.inputs["accountName"] == source.inputs["sourceAccount"].rsplit("/", 1)[-1]
    assert all(rule["ruleId"] for rule in source.inputs["rules"])
    assert {r["sourceContainer"] for r in source.inputs["rules"]} == {
        r["sourceContainer"] for r in destination.inputs["rules"]
    }
    containers = {c.urn: c.inputs["accountName"] for c in plan.of_type("azure-native:storage:BlobContainer")}
    waits_for = {containers[d] for d in destination.dependencies if d in containers}
    assert waits_for == {destination.inputs["accountName"], source.inputs["accountName"]}
    assert all(r["filters"]["minCreationTime"] == "1601-01-01T00:00:00Z" for r in destination.inputs["rules"])


def test_with_customer_managed_keys_each_account_encrypts_with_its_own_regions_vault():
    """An account serves data only while it reaches its key: the replica uses its own region's
    vault and identity, so it stays readable with the primary's vault gone."""

    def with_keys(values):
        values["platform:storage"]["customerManagedKey"] = True

    plan = run_with("prod", with_keys)
    assert plan.ok, plan.error
    vaults = {v.inputs["vaultName"]: v.inputs["location"] for v in plan.of_type("azure-native:keyvault:Vault")}
    identities = {
        resource_id(i): i.inputs["location"] for i in plan.of_type("azure-native:managedidentity:UserAssignedIdentity")
    }
    accounts = plan.of_type(STORAGE)
    assert {a.inputs["location"] for a in accounts} == set(_regions("prod"))
    for account in accounts:
        encryption = account.inputs["encryption"]
        vault = encryption["keyVaultProperties"]["keyVaultUri"].removeprefix("https://").split(".")[0]
        assert vaults[vault] == account.inputs["location"], account.name
        identity = encryption["encryptionIdentity"]["encryptionUserAssignedIdentity"]
        assert identities[identity] == account.inputs["location"], account.name
