"""The whole environment: observability, one network per region, and the clusters.

This is the only place that knows how capabilities connect; each component below it takes
plain typed arguments and can be read on its own.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import combinations

import pulumi
import pulumi_azure_native
from pulumi_azure_native import authorization

from components.cluster import AksCluster, AksClusterArgs, ClusterMonitoring, ClusterNetwork
from components.fleet import FleetArgs, FleetMemberSpec, KubernetesFleet
from components.gpu_stack import GpuStack, GpuStackArgs
from components.network import HubPeeringSpec, RegionalNetwork, RegionalNetworkArgs, SubnetSpec, peer_regions
from components.observability import Observability, ObservabilityArgs
from planning import capacity
from planning.naming import Naming, parse_resource_id
from stackconfig.model import PlatformConfig

API_SERVER_DELEGATION = "Microsoft.ContainerService/managedClusters"
PRIVATE_ENDPOINT_SUBNET = "private-endpoints"


def region_subnets(config: PlatformConfig, region: str) -> list[SubnetSpec]:
    """The subnets of one region's VNet, in creation order, keyed `<cluster>-<role>`."""
    vnet = config.network.regions[region]
    specs = [SubnetSpec(PRIVATE_ENDPOINT_SUBNET, "privateEndpoints", vnet.subnets.private_endpoints)]
    for key, cluster in config.clusters.items():
        if cluster.region != region:
            continue
        subnets = cluster.subnets
        specs.append(SubnetSpec(f"{key}-system", "system", subnets.system, egress=True))
        specs.append(SubnetSpec(f"{key}-nodes", "nodes", subnets.nodes, egress=True))
        if subnets.pods is not None:
            specs.append(SubnetSpec(f"{key}-pods", "pods", subnets.pods, egress=True))
        if subnets.api_server is not None:
            specs.append(
                SubnetSpec(f"{key}-apiserver", "apiServer", subnets.api_server, delegation=API_SERVER_DELEGATION)
            )
    return specs


@dataclass(frozen=True)
class PlatformArgs:
    config: PlatformConfig


class Platform(pulumi.ComponentResource):
    clusters: dict[str, AksCluster]
    networks: dict[str, RegionalNetwork]

    def __init__(self, name: str, args: PlatformArgs, opts: pulumi.ResourceOptions | None = None):
        super().__init__("platform:index:Platform", name, None, opts)
        config = args.config
        naming = Naming(config.prefix, config.environment)
        tags = {"environment": config.environment, **config.tags, "managed-by": "pulumi"}
        child = pulumi.ResourceOptions(parent=self)
        deployer = authorization.get_client_config_output(opts=pulumi.InvokeOutputOptions(parent=self))

        primary_region = next(iter(config.clusters.values())).region
        observability = Observability(
            "ops",
            ObservabilityArgs(
                naming=naming,
                region=primary_region,
                retention_days=config.operations.log_retention_days,
                protect=config.protect,
                tags=tags,
            ),
            opts=child,
        )

        egress, hub = config.network.egress, config.network.hub
        hub_provider = None
        if hub and hub.create_hub_side_peering:
            # The hub often lives in a connectivity subscription of its own.
            hub_provider = pulumi_azure_native.Provider(
                "hub-subscription",
                subscription_id=parse_resource_id(hub.virtual_network_id).subscription,
                opts=child,
            )
        private_regions = {c.region for c in config.clusters.values() if c.api_server.private}
        self.networks = {}
        previous_hub_peering = None
        for region, vnet in config.network.regions.items():
            regional = RegionalNetwork(
                f"net-{region}",
                RegionalNetworkArgs(
                    naming=naming,
                    region=region,
                    address_space=list(vnet.address_space),
                    subnets=region_subnets(config, region),
                    outbound_type=egress.outbound_type,
                    firewall_private_ip=egress.firewall_private_ip,
                    nat_idle_timeout_minutes=egress.nat_gateway.idle_timeout_minutes,
                    nat_public_ip_count=egress.nat_gateway.public_ip_count,
                    hub=HubPeeringSpec(
                        hub.virtual_network_id,
                        hub.create_hub_side_peering,
                        hub.use_remote_gateways,
                        provider=hub_provider,
                        after=previous_hub_peering,
                    )
                    if hub
                    else None,
                    protect=config.protect,
                    api_server_dns_zone=region in private_regions,
                    tags=tags,
                ),
                opts=child,
            )
            previous_hub_peering = regional.hub_side_peering or previous_hub_peering
            self.networks[region] = regional
        # Regions of one environment reach each other directly (e.g. Kafka mirroring).
        for first, second in combinations(self.networks.values(), 2):
            peer_regions(first, second, parent=self)

        self.clusters = {}
        for key, cluster in config.clusters.items():
            regional = self.networks[cluster.region]
            subnet_ids = regional.subnet_ids
            self.clusters[key] = AksCluster(
                f"aks-{key}",
                AksClusterArgs(
                    naming=naming,
                    key=key,
                    cluster=cluster,
                    network=config.network,
                    subnets=ClusterNetwork(
                        system_subnet_id=subnet_ids[f"{key}-system"],
                        nodes_subnet_id=subnet_ids[f"{key}-nodes"],
                        api_server_subnet_id=subnet_ids.get(f"{key}-apiserver"),
                        pods_subnet_id=subnet_ids.get(f"{key}-pods"),
                        vnet_id=regional.vnet_id,
                        api_server_dns_zone_id=regional.api_server_dns_zone_id,
                    ),
                    admin_group_object_ids=list(config.entra.admin_group_object_ids),
                    tenant_id=config.entra.tenant_id or deployer.tenant_id,
                    subscription_id=deployer.subscription_id,
                    kubelogin_mode=config.entra.kubelogin_mode,
                    operations=config.operations,
                    monitoring=ClusterMonitoring(
                        log_analytics_workspace_id=observability.log_analytics_workspace_id,
                        monitor_workspace_id=observability.monitor_workspace_id,
                        monitor_workspace_region=observability.region,
                    ),
                    protect=config.protect,
                    upgrade_channel=config.upgrade_channel(key),
                    node_os_channel=config.node_os_channel(key),
                    fleet_managed=config.has_fleet,
                    tags={**tags, "cluster": key},
                ),
                opts=child,
            )
            gpu_pools = capacity.plan_cluster(config, key).gpu_pools
            if gpu_pools:
                GpuStack(
                    f"gpu-{key}",
                    GpuStackArgs(cluster=cluster, gpu_pools=gpu_pools, teams=dict(config.teams)),
                    provider=self.clusters[key].kubernetes_provider,
                    opts=child,
                )

        self.fleet = None
        if config.has_fleet:
            self.fleet = KubernetesFleet(
                "fleet",
                FleetArgs(
                    naming=naming,
                    region=primary_region,
                    settings=config.fleet_settings,
                    members=[FleetMemberSpec(key, c.cluster_id) for key, c in self.clusters.items()],
                    tags=tags,
                ),
                opts=child,
            )
        self.register_outputs({"clusters": {key: c.cluster_name for key, c in self.clusters.items()}})
