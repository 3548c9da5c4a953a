"""Security and sizing properties of every stack's plan, read from the captured inputs."""

from __future__ import annotations

import math
import re
from ipaddress import IPv4Network

import pytest

from tests.conftest import STACKS, run_with, second_preview

CLUSTER = "azure-native:containerservice:ManagedCluster"
POOL = "azure-native:containerservice:AgentPool"
SUBNET = "azure-native:network:Subnet"


def clusters(plan):
    return plan.of_type(CLUSTER)


@pytest.mark.parametrize("stack", STACKS)
def test_clusters_are_entra_only(plans, stack):
    for cluster in clusters(plans[stack]):
        inputs = cluster.inputs
        assert inputs["disableLocalAccounts"] is True, f"{cluster.name} keeps local accounts"
        assert inputs["enableRBAC"] is True
        aad = inputs["aadProfile"]
        assert aad["managed"] is True and aad["enableAzureRBAC"] is True
        assert aad["adminGroupObjectIDs"], "an Entra admin group is required"
        assert inputs["oidcIssuerProfile"]["enabled"] is True
        assert inputs["securityProfile"]["workloadIdentity"]["enabled"] is True
        assert inputs["identity"]["type"] == "UserAssigned"
        assert set(inputs["identityProfile"]) == {"kubeletidentity"}


@pytest.mark.parametrize("stack", ["staging", "prod"])
def test_staging_and_prod_api_servers_are_private(plans, stack):
    for cluster in clusters(plans[stack]):
        access = cluster.inputs["apiServerAccessProfile"]
        assert access["enablePrivateCluster"] is True
        assert access["enablePrivateClusterPublicFQDN"] is False
        assert access["enableVnetIntegration"] is True and access["subnetId"].endswith("-apiserver")
        assert "authorizedIPRanges" not in access
        region = cluster.inputs["location"]
        # The environment's own subzone of the hub's zones: rights there reach its records alone.
        assert access["privateDNSZone"].endswith(f"/privateDnsZones/ailab-{stack}.privatelink.{region}.azmk8s.io")


@pytest.mark.parametrize("stack", ["staging", "prod"])
def test_hub_runners_can_resolve_private_api_servers(plans, stack):
    """The shared zones (API servers, and the data plane as the primary region reaches it) are
    linked to the hub; a second region's own data-plane zones only to that region's VNet."""
    plan = plans[stack]
    for zone in plan.of_type("azure-native:privatedns:PrivateZone"):
        if zone.name.startswith("serving-zone-"):
            continue  # the serving names, which runners never call (tests/test_serving.py)
        links = [
            link
            for link in plan.of_type("azure-native:privatedns:VirtualNetworkLink")
            if link.inputs["privateZoneName"] == zone.inputs["privateZoneName"]
            and link.inputs["resourceGroupName"] == zone.inputs["resourceGroupName"]
        ]
        linked = {link.inputs["virtualNetwork"]["id"].rsplit("/", 1)[-1] for link in links}
        own_set = zone.name.startswith("dns-") and not zone.name.startswith("dns-privatelink")
        if own_set:
            (vnet,) = linked
            assert vnet.startswith("vnet-ailab-") and vnet.endswith(zone.name.split("-")[1])
        else:
            assert "vnet-hub-eus2" in linked and any(v.startswith("vnet-ailab-") for v in linked)
        assert all(link.inputs["registrationEnabled"] is False for link in links)


@pytest.mark.parametrize("stack", STACKS)
def test_no_api_server_is_open_to_the_internet(plans, stack):
    for cluster in clusters(plans[stack]):
        access = cluster.inputs["apiServerAccessProfile"]
        if access.get("enablePrivateCluster"):
            continue
        ranges = [IPv4Network(r) for r in access.get("authorizedIPRanges", [])]
        assert ranges, f"{cluster.name} has a public API server with no authorized ranges"
        assert all(r.prefixlen > 0 for r in ranges), f"{cluster.name} authorizes 0.0.0.0/0"


@pytest.mark.parametrize("stack", STACKS)
def test_azure_cni_overlay_with_cilium(plans, stack):
    for cluster in clusters(plans[stack]):
        network = cluster.inputs["networkProfile"]
        assert network["networkPlugin"] == "azure"
        assert network["networkPluginMode"] == "overlay"
        assert network["networkDataplane"] == "cilium" and network["networkPolicy"] == "cilium"
        assert network["outboundType"] in ("userAssignedNATGateway", "userDefinedRouting")


def test_tiers_per_environment(plans):
    assert {c.inputs["sku"]["tier"] for c in clusters(plans["dev"])} == {"Free"}
    assert {c.inputs["sku"]["tier"] for c in clusters(plans["staging"])} == {"Standard"}
    assert {c.inputs["sku"]["tier"] for c in clusters(plans["prod"])} == {"Standard"}
    # One GPU cluster per region, and one MultiKueue dispatcher per region (platform:jobs).
    assert sorted(c.inputs["tags"]["cluster"] for c in clusters(plans["prod"])) == [
        "dispeus2",
        "dispscus",
        "eus2",
        "scus",
    ]
    assert all(
        c.inputs["agentPoolProfiles"][0]["availabilityZones"] == ["1", "2", "3"] for c in clusters(plans["prod"])
    )


@pytest.mark.parametrize("stack", STACKS)
def test_autoscaled_pools_never_fight_the_autoscaler(plans, stack):
    plan = plans[stack]
    for cluster in clusters(plan):
        for index, pool in enumerate(cluster.inputs["agentPoolProfiles"]):
            if pool.get("enableAutoScaling"):
                assert f"agentPoolProfiles[{index}].count" in cluster.options.ignore_changes
    pools = plan.of_type(POOL)
    assert pools, "every stack has user pools"
    for pool in pools:
        assert pool.inputs["enableAutoScaling"] is True
        assert "count" in pool.options.ignore_changes, f"{pool.name} would reset the autoscaler's count"
        assert pool.options.delete_before_replace, f"{pool.name} keeps a fixed name, so replacement must delete first"


@pytest.mark.parametrize("stack", STACKS)
def test_system_pool_is_hardened(plans, stack):
    for cluster in clusters(plans[stack]):
        (system,) = cluster.inputs["agentPoolProfiles"]  # other pools are separate AgentPools
        assert system["mode"] == "System"
        assert "CriticalAddonsOnly=true:NoSchedule" in system["nodeTaints"]
        assert system["osDiskType"] == "Ephemeral" and system["osSKU"] == "AzureLinux"
        assert system["enableEncryptionAtHost"] is True and system["enableNodePublicIP"] is False
        assert system["securityProfile"]["sshAccess"] == "Disabled"
        assert system["upgradeSettings"]["maxSurge"]


@pytest.mark.parametrize("stack", STACKS)
def test_node_subnets_hold_every_pool_at_max_plus_surge(plans, stack):
    """Counted from the captured AgentPool/subnet inputs, not from the config model."""
    plan = plans[stack]
    prefixes = {}
    for subnet in plan.of_type(SUBNET):
        prefixes[subnet.inputs["subnetName"]] = IPv4Network(subnet.inputs["addressPrefix"])
    for cluster in clusters(plan):
        needed: dict[str, int] = {}
        profiles = list(cluster.inputs["agentPoolProfiles"])
        profiles += [p.inputs for p in plan.of_type(POOL) if p.inputs["resourceName"] == cluster.inputs["resourceName"]]
        for pool in profiles:
            surge = pool["upgradeSettings"]["maxSurge"]
            extra = math.ceil(pool["maxCount"] * int(surge[:-1]) / 100) if surge.endswith("%") else int(surge)
            subnet_name = pool["vnetSubnetID"].rsplit("/", 1)[-1]
            needed[subnet_name] = needed.get(subnet_name, 0) + pool["maxCount"] + extra
        for subnet_name, nodes in needed.items():
            assert prefixes[subnet_name].num_addresses - 5 >= nodes, f"{subnet_name} cannot hold {nodes} nodes"
        pod_cidr = IPv4Network(cluster.inputs["networkProfile"]["podCidr"])
        assert 2 ** (24 - pod_cidr.prefixlen) >= sum(needed.values()), "overlay pod CIDR too small"


def test_prod_is_sized_for_5000_nodes_at_250_pods(plans):
    plan = plans["prod"]
    for subnet in plan.of_type(SUBNET):
        # A dispatcher's nodes subnet holds no user pools.
        if subnet.inputs["subnetName"].endswith("-nodes") and "-disp" not in subnet.inputs["subnetName"]:
            assert IPv4Network(subnet.inputs["addressPrefix"]).num_addresses - 5 >= 5000 * 1.1
    for cluster in clusters(plan):
        assert 2 ** (24 - IPv4Network(cluster.inputs["networkProfile"]["podCidr"]).prefixlen) >= 5000 * 1.1
    # Kafka's pools hold a few pods per node, the sandbox pool a few Kata VMs, the flink pool a
    # few JobManagers and TaskManagers; the pools that grow to thousands take 250.
    cpu_pools = [
        p
        for p in plan.of_type(POOL)
        if "gpuProfile" not in p.inputs and not p.inputs["agentPoolName"].startswith(("kafka", "sandbox", "flink"))
    ]
    assert cpu_pools and {p.inputs["maxPods"] for p in cpu_pools} == {250}


@pytest.mark.parametrize("stack", STACKS)
def test_every_subnet_has_an_nsg_and_no_default_outbound_access(plans, stack):
    for subnet in plans[stack].of_type(SUBNET):
        if subnet.inputs["subnetName"] == "AzureFirewallSubnet":
            # The way out itself: Azure allows no NSG or route table on it.
            assert "networkSecurityGroup" not in subnet.inputs and "routeTable" not in subnet.inputs
            continue
        assert subnet.inputs["defaultOutboundAccess"] is False
        assert "/networkSecurityGroups/" in subnet.inputs["networkSecurityGroup"]["id"]


def test_egress_paths(plans):
    for subnet in plans["dev"].of_type(SUBNET):
        name = subnet.inputs["subnetName"]
        if name.endswith(("-system", "-nodes")):
            assert "/natGateways/" in subnet.inputs["natGateway"]["id"], name
    assert not plans["dev"].of_type("azure-native:network:AzureFirewall")
    for stack in ("staging", "prod"):
        assert not plans[stack].of_type("azure-native:network:NatGateway")
        for route_table in plans[stack].of_type("azure-native:network:RouteTable"):
            region = route_table.inputs["location"]
            firewall_subnet = next(
                s
                for s in plans[stack].of_type(SUBNET)
                if s.inputs["subnetName"] == "AzureFirewallSubnet" and f"-{region}-" in s.name
            )
            (route,) = route_table.inputs["routes"]
            assert route["addressPrefix"] == "0.0.0.0/0" and route["nextHopType"] == "VirtualAppliance"
            # The region's own firewall (Azure gives it the subnet's first usable address).
            assert route["nextHopIpAddress"] == str(IPv4Network(firewall_subnet.inputs["addressPrefix"])[4])
            assert route_table.inputs["disableBgpRoutePropagation"] is True
        for subnet in plans[stack].of_type(SUBNET):
            if subnet.inputs["subnetName"].endswith(("-system", "-nodes")):
                assert "/routeTables/" in subnet.inputs["routeTable"]["id"]
                assert "natGateway" not in subnet.inputs


def test_api_server_subnet_is_delegated(plans):
    delegated = [s for s in plans["prod"].of_type(SUBNET) if s.inputs["subnetName"].endswith("-apiserver")]
    assert len(delegated) == 4  # every prod cluster's, the dispatchers' included
    for subnet in delegated:
        (delegation,) = subnet.inputs["delegations"]
        assert delegation["serviceName"] == "Microsoft.ContainerService/managedClusters"
        assert IPv4Network(subnet.inputs["addressPrefix"]).prefixlen <= 28


def test_prod_protects_what_is_hard_to_rebuild_and_dev_does_not(plans):
    stateful = (
        CLUSTER,
        "azure-native:operationalinsights:Workspace",
        "azure-native:network:VirtualNetwork",
        "azure-native:monitor:AzureMonitorWorkspace",
    )
    for token in stateful:
        assert all(r.options.protect for r in plans["prod"].of_type(token)), token
        assert not any(r.options.protect for r in plans["dev"].of_type(token)), token


ROLE_IDS = {
    "4d97b98b-1d4f-4787-a291-c67834d212e7": "Network Contributor",
    "f1a07417-d97a-45cb-824c-7a7467783830": "Managed Identity Operator",
    "b12aa53e-6015-4669-85d0-8515ebb3ae7f": "Private DNS Zone Contributor",
    "12338af0-0e69-4776-bea7-57ae8d297424": "Key Vault Crypto User",
    "f25e0fa2-a7c8-4377-a976-54943a77a395": "Key Vault Contributor",
}


@pytest.mark.parametrize("stack", STACKS)
def test_control_plane_roles_are_least_privilege(plans, stack):
    plan = plans[stack]
    assignments = [a for a in plan.of_type("azure-native:authorization:RoleAssignment") if "-control-plane-" in a.name]
    assert assignments
    private = {
        c.inputs["resourceName"]
        for c in clusters(plan)
        if c.inputs["apiServerAccessProfile"].get("enablePrivateCluster")
    }
    for assignment in assignments:
        scope = assignment.inputs["scope"]
        assert "/providers/" in scope, f"{assignment.name} is scoped to a subscription or resource group"
        assert assignment.inputs["principalType"] == "ServicePrincipal"
        role = ROLE_IDS[assignment.inputs["roleDefinitionId"].rsplit("/", 1)[-1]]
        if role == "Network Contributor":
            cluster_name = f"aks-ailab-{stack}-{assignment.name.split('-')[1]}"
            # Subnets for a public cluster; the VNet for a private one (AKS docs: a custom
            # private DNS zone needs Network Contributor on the VNet).
            expected_parent = "virtualNetworks" if cluster_name in private else "subnets"
            assert scope.split("/")[-2] == expected_parent, (assignment.name, scope)
        elif role == "Private DNS Zone Contributor":
            # The region's zone of the environment's own, or its own subzone of the hub's.
            assert re.search(rf"/privateDnsZones/(ailab-{stack}\.)?privatelink\.\w+\.azmk8s\.io$", scope), scope
            assert ("/resourceGroups/rg-hub-dns/" in scope) == (f"/ailab-{stack}.privatelink." in scope), scope
        elif role.startswith("Key Vault"):
            # Its own cluster's etcd key vault only (components/etcd_encryption.py).
            cluster_key = assignment.name.split("-")[1]
            assert re.search(rf"/vaults/kv-{cluster_key[:9]}-etcd-[0-9a-f]{{6}}$", scope), (assignment.name, scope)
        else:
            assert "/userAssignedIdentities/" in scope and scope.endswith("-kubelet")
    names = [a.inputs["roleAssignmentName"] for a in assignments]
    assert len(set(names)) == len(names)


def test_role_assignment_names_are_identical_across_runs(plans):
    again = second_preview("prod")
    first = sorted(
        a.inputs["roleAssignmentName"] for a in plans["prod"].of_type("azure-native:authorization:RoleAssignment")
    )
    second = sorted(a.inputs["roleAssignmentName"] for a in again.of_type("azure-native:authorization:RoleAssignment"))
    assert first == second


@pytest.mark.parametrize("stack", STACKS)
def test_operations_are_wired(plans, stack):
    plan = plans[stack]
    # A workspace per region with clusters (decision 0008).
    for workspace in plan.of_type("azure-native:operationalinsights:Workspace"):
        assert workspace.inputs["features"]["disableLocalAuth"] is True
    amw_id = "/providers/Microsoft.Monitor/accounts/"
    for cluster in clusters(plan):
        cluster_id_suffix = f"/managedClusters/{cluster.inputs['resourceName']}"
        addons = cluster.inputs["addonProfiles"]
        assert addons["azurepolicy"]["enabled"] is True
        assert addons["azureKeyvaultSecretsProvider"]["config"]["enableSecretRotation"] == "true"
        assert cluster.inputs["securityProfile"]["imageCleaner"]["enabled"] is True
        assert cluster.inputs["azureMonitorProfile"]["metrics"]["enabled"] is True
        diagnostics = [
            d
            for d in plan.of_type("azure-native:monitor:DiagnosticSetting")
            if d.inputs["resourceUri"].endswith(cluster_id_suffix)
        ]
        (diagnostic,) = diagnostics
        assert {"kube-audit-admin", "guard"} <= {log["category"] for log in diagnostic.inputs["logs"]}
        assert "/workspaces/" in diagnostic.inputs["workspaceId"]
        # Prometheus' rule (Container Insights' associations: tests/test_operations.py).
        (association,) = [
            a
            for a in plan.of_type("azure-native:monitor:DataCollectionRuleAssociation")
            if a.inputs["resourceUri"].endswith(cluster_id_suffix)
            and a.inputs["associationName"].endswith("-prometheus")
        ]
        rule = next(
            r
            for r in plan.of_type("azure-native:monitor:DataCollectionRule")
            if association.inputs["dataCollectionRuleId"].endswith(r.inputs["dataCollectionRuleName"])
        )
        assert amw_id in rule.inputs["destinations"]["monitoringAccounts"][0]["accountResourceId"]
        assert rule.inputs["dataFlows"][0]["streams"] == ["Microsoft-PrometheusMetrics"]
        assert "/dataCollectionEndpoints/" in rule.inputs["dataCollectionEndpointId"]
    defender = [c.inputs["securityProfile"].get("defender") for c in clusters(plan)]
    if stack == "dev":
        assert defender == [None]
    else:
        assert all("/workspaces/" in d["logAnalyticsWorkspaceResourceId"] for d in defender)


@pytest.mark.parametrize("stack", STACKS)
def test_one_owner_of_the_kubernetes_version_and_maintenance_windows(plans, stack):
    """A lone cluster owns major.minor with the patch channel; fleet members leave the
    version to the fleet (channel off, version changes ignored)."""
    plan = plans[stack]
    fleet_members = {m.inputs["fleetMemberName"] for m in plan.of_type("azure-native:containerservice:FleetMember")}
    for cluster in clusters(plan):
        profile = cluster.inputs["autoUpgradeProfile"]
        if len(clusters(plan)) > 1:
            # Fleet update runs move node images with the version; AKS only patches the OS.
            assert profile["nodeOSUpgradeChannel"] == "SecurityPatch"
            assert profile["upgradeChannel"] == "none", "the fleet, not AKS, upgrades fleet members"
            assert "kubernetesVersion" in cluster.options.ignore_changes
            assert cluster.inputs["resourceName"].removeprefix("aks-ailab-prod-") in fleet_members
        else:
            assert profile["nodeOSUpgradeChannel"] == "NodeImage"
            assert profile["upgradeChannel"] == "patch"
            assert cluster.inputs["kubernetesVersion"].count(".") == 1, "patch channel: we own major.minor only"
            assert "kubernetesVersion" not in cluster.options.ignore_changes
            assert not fleet_members
    names = sorted(
        m.inputs["configName"] for m in plan.of_type("azure-native:containerservice:MaintenanceConfiguration")
    )
    assert names == sorted(["aksManagedAutoUpgradeSchedule", "aksManagedNodeOSUpgradeSchedule"] * len(clusters(plan)))


def test_a_shared_hub_gets_its_side_of_the_peerings_from_its_owner(plans):
    """prod shares the hub with staging: it makes only its own half of each peering (peer/action
    on the hub VNet), and hands the hub's owner the hub's half in stack output hubRequests."""
    plan = plans["prod"]
    peerings = plan.of_type("azure-native:network:VirtualNetworkPeering")
    assert sorted(p.name for p in peerings) == [
        "net-eastus2-to-hub",
        "net-southcentralus-to-hub",
        "peer-eastus2-to-southcentralus",
        "peer-southcentralus-to-eastus2",
    ]
    assert not plans["dev"].of_type("azure-native:network:VirtualNetworkPeering")
    vnets = {v.inputs["virtualNetworkName"]: v for v in plan.of_type("azure-native:network:VirtualNetwork")}
    requested = plan.outputs["hubRequests"]["peerings"]
    assert [(r["name"], r["remoteVirtualNetworkId"].rsplit("/", 1)[-1]) for r in requested] == [
        ("peer-to-vnet-ailab-prod-eus2", "vnet-ailab-prod-eus2"),
        ("peer-to-vnet-ailab-prod-scus", "vnet-ailab-prod-scus"),
    ]
    assert set(vnets) == {"vnet-ailab-prod-eus2", "vnet-ailab-prod-scus"}
    # As the hub's half always was: return traffic from the hub's firewall arrives forwarded.
    assert all(r["allowForwardedTraffic"] and r["allowVirtualNetworkAccess"] for r in requested)


def test_a_hub_of_its_own_is_peered_from_both_sides_one_write_at_a_time():
    """An environment that has a hub to itself (no shared zones) may write the hub's half, in the
    hub's subscription, one peering after the other (two writes to one VNet at once fail)."""

    def own_hub(values: dict) -> None:
        values["platform:network"]["hub"]["createHubSidePeering"] = True
        del values["platform:network"]["hub"]["privateDnsZonesResourceGroupId"]
        del values["platform:operations"]["privateLinkScope"]["scopeId"]

    plan = run_with("prod", own_hub)
    assert plan.ok, plan.error
    provider = plan.one("pulumi:providers:azure-native", "subscription-0b1f6471-1bf0-4dda-aec3-111122223333")
    hub_side = [p for p in plan.of_type("azure-native:network:VirtualNetworkPeering") if p.name.endswith("-from-hub")]
    assert hub_side and all(p.provider.startswith(provider.urn) for p in hub_side)
    assert all(
        p.inputs["resourceGroupName"] == "rg-hub-eus2" and p.inputs["virtualNetworkName"] == "vnet-hub-eus2"
        for p in hub_side
    )
    for spoke_side in plan.of_type("azure-native:network:VirtualNetworkPeering"):
        if spoke_side.name.endswith("-to-hub"):
            assert not spoke_side.provider.startswith(provider.urn)
            assert any(plan.by_urn(u).name.endswith("-from-hub") for u in spoke_side.dependencies)
    assert "peerings" not in plan.outputs.get("hubRequests", {})
    first, second = sorted(hub_side, key=lambda p: len(p.dependencies))
    assert first.urn in second.dependencies, "two writes to one hub VNet at once fail"


@pytest.mark.parametrize("stack", STACKS)
def test_outputs_give_cluster_name_issuer_and_a_kubelogin_kubeconfig(plans, stack):
    outputs = plans[stack].outputs
    for key, cluster in outputs["clusters"].items():
        assert cluster["name"].startswith("aks-")
        assert (
            cluster["oidcIssuerUrl"].startswith("https://") and ".oic.prod-aks.azure.com/" in cluster["oidcIssuerUrl"]
        )
        kubeconfig = outputs["kubeconfigs"][key]
        assert "--login\n      - azurecli" in kubeconfig and "devicecode" not in kubeconfig
        assert "client-certificate-data" not in kubeconfig and "token:" not in kubeconfig


@pytest.mark.parametrize("stack", STACKS)
def test_every_taggable_resource_carries_the_required_tags(plans, stack):
    from offline.inputs import resource_args_class, wire_properties

    taggable = [
        r
        for r in plans[stack].resources
        if r.custom and r.type.startswith("azure-native:") and "tags" in wire_properties(resource_args_class(r.type))
    ]
    assert len(taggable) > 15
    for resource in taggable:
        tags = resource.inputs.get("tags", {})
        assert {"environment", "owner", "cost-center"} <= set(tags), f"{resource.type} {resource.name}"
        assert tags["environment"] == stack


def test_classic_cni_takes_pods_from_the_pod_subnet():
    """cni: podSubnet - pods get VNet addresses; no overlay, no pod CIDR (the SDK would add one)."""
    from tests.conftest import run_with

    def change(values):
        cluster = values["platform:clusters"]["eus2"]
        cluster["cni"] = "podSubnet"
        cluster["subnets"]["pods"] = "10.10.16.0/20"

    plan = run_with("dev", change)
    assert plan.ok, plan.error
    (cluster,) = clusters(plan)
    network = cluster.inputs["networkProfile"]
    assert "podCidr" not in network and "networkPluginMode" not in network
    assert network["networkPlugin"] == "azure" and network["networkDataplane"] == "cilium"
    pools = list(cluster.inputs["agentPoolProfiles"]) + [p.inputs for p in plan.of_type(POOL)]
    assert all(pool["podSubnetID"].endswith("-eus2-pods") for pool in pools)
    pods_subnet = plan.one(SUBNET, "net-eastus2-snet-eus2-pods")
    assert "/natGateways/" in pods_subnet.inputs["natGateway"]["id"]


# ---------------------------------------------------------------------------------------------
# What a first real `pulumi up` would otherwise trip on
# ---------------------------------------------------------------------------------------------
def _by_urn(plan):
    return {r.urn: r for r in plan.resources}


@pytest.mark.parametrize("stack", STACKS)
def test_public_api_servers_let_their_nodes_in(plans, stack):
    """Nodes reach a public API server from their NAT gateway's (or firewall's) public address,
    which AKS does not add by itself (api-server-authorized-ip-ranges: only the Standard load
    balancer's outbound IP is added): each egress address is in the authorized ranges."""
    plan = plans[stack]
    egress = {
        r.urn: r
        for r in plan.of_type("azure-native:network:PublicIPAddress")
        if "-nat-pip-" in r.name or r.name.endswith("-egress-pip")
    }
    for cluster in clusters(plan):
        access = cluster.inputs["apiServerAccessProfile"]
        if access.get("enablePrivateCluster"):
            continue
        ranges = access["authorizedIPRanges"]
        region_ips = [urn for urn in egress if f"net-{cluster.inputs['location']}-" in urn]
        assert region_ips, f"{cluster.name}: no egress address in {cluster.inputs['location']}"
        assert "198.51.100.10/32" in ranges  # the offline answer for each public IP
        assert set(region_ips) <= set(cluster.dependencies), "the ranges are taken from the egress addresses"


@pytest.mark.parametrize("stack", STACKS)
def test_a_cluster_is_created_after_its_grants_have_had_time_to_propagate(plans, stack):
    plan = plans[stack]
    resources = _by_urn(plan)
    for cluster in clusters(plan):
        (sleep,) = [resources[u] for u in cluster.dependencies if resources[u].type == "time:index/sleep:Sleep"]
        assert sleep.inputs["createDuration"] == "120s"
        grants = [u for u in sleep.dependencies if resources[u].type == "azure-native:authorization:RoleAssignment"]
        assert grants and set(grants) <= set(cluster.dependencies)
        # A replaced grant waits again.
        assert len(sleep.inputs["triggers"]) == len(grants)


@pytest.mark.parametrize("stack", ["staging", "prod"])
def test_a_private_cluster_finds_its_api_server_zone_already_linked_to_its_vnet(plans, stack):
    """AKS links a bring-your-own zone to the cluster's VNet itself unless a link exists, and a
    zone takes one link per VNet (Azure/AKS#2711, #4841; private-clusters.md creates the link
    before the cluster): the program's link exists first."""
    plan = plans[stack]
    resources = _by_urn(plan)
    for cluster in clusters(plan):
        zone = cluster.inputs["apiServerAccessProfile"]["privateDNSZone"].rsplit("/", 1)[-1]
        vnet_of_cluster = cluster.inputs["agentPoolProfiles"][0]["vnetSubnetID"].split("/subnets/")[0]
        links = [
            resources[u]
            for u in cluster.dependencies
            if resources[u].type == "azure-native:privatedns:VirtualNetworkLink"
        ]
        assert [(link.inputs["privateZoneName"], link.inputs["virtualNetwork"]["id"]) for link in links] == [
            (zone, vnet_of_cluster)
        ]


def test_a_unit_whose_provider_signs_in_to_another_subscription_stops_before_creating_anything():
    """A manual `pulumi up -s dev.foundation` after `az account set` to another subscription: the
    program stops on platform:subscriptionId with the fix, and registers nothing there."""
    from offline.engine import PROJECT_ROOT, run_program
    from validation.stackfile import StackConfig

    plan = run_program(StackConfig("platform", "dev.foundation", {}, []), PROJECT_ROOT, cloud="the-wrong-subscription")
    assert not plan.ok
    assert "platform:subscriptionId: dev deploys to d2bf8eeb-1057-5d65-84b7-d7af78a77b77" in plan.error
    assert "pulumi config set azure-native:subscriptionId d2bf8eeb-1057-5d65-84b7-d7af78a77b77" in plan.error
    assert "Traceback" not in plan.error
    assert [r.type for r in plan.resources if r.custom] == []
