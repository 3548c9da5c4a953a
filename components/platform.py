"""The whole environment, in the order it is built:

1. observability (Log Analytics, Azure Monitor workspace);
2. one network per region, peered with each other and the hub;
3. Private DNS zones linked to those networks;
4. the private data plane: Key Vault, container registry, storage accounts;
5. the clusters (each pulling from the registry), then the fleet;
6. workload identities federated with the clusters and granted data access;
7. per cluster: team namespaces, service accounts and RBAC, admission policies and
   PriorityClasses, then the GPU stack; every namespace denies all traffic but its allows;
8. the event backbone: Strimzi Kafka in each hosting cluster and MirrorMaker between them,
   or an Event Hubs namespace, with each client's access.

This is the only place that knows how capabilities connect; each component below it takes
plain typed arguments and can be read on its own.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import combinations
from typing import Any

import pulumi
import pulumi_azure_native
from pulumi_azure_native import authorization

from components.admission import ClusterAdmission, ClusterAdmissionArgs
from components.cluster import AksCluster, AksClusterArgs, ClusterMonitoring, ClusterNetwork
from components.event_hubs import EventHubsBackbone, EventHubsBackboneArgs
from components.fleet import FleetArgs, FleetMemberSpec, KubernetesFleet
from components.gpu_stack import GpuStack, GpuStackArgs
from components.kafka import (
    KafkaClientSpec,
    KafkaMirror,
    KafkaMirrorArgs,
    MirrorIdentity,
    MirrorSource,
    ReplicationEndpoint,
    StrimziKafka,
    StrimziKafkaArgs,
)
from components.keyvault import KeyVault, KeyVaultArgs
from components.network import (
    FirewallSpec,
    HubPeeringSpec,
    RegionalNetwork,
    RegionalNetworkArgs,
    SubnetSpec,
    peer_regions,
)
from components.observability import Observability, ObservabilityArgs
from components.plan_access import PlanAccess, PlanAccessArgs
from components.private_dns import CentralZones, DataPlaneSettings, PrivateDns, PrivateDnsArgs, PrivateEndpoints
from components.registry import ContainerRegistry, ContainerRegistryArgs
from components.storage import PrivateStorage, PrivateStorageArgs
from components.tenancy import ClusterTenancy, ClusterTenancyArgs, ServiceAccountSpec
from components.workload_identity import Grant, WorkloadIdentities, WorkloadIdentitiesArgs, WorkloadSpec
from planning import capacity
from planning import egress as egress_plan
from planning import kafka as kafka_plan
from planning.cluster_traffic import (
    GPU_OPERATOR_NAMESPACE,
    NETWORK_OPERATOR_NAMESPACE,
    cluster_traffic,
    component_namespaces,
)
from planning.images import PLATFORM_CACHE_RULES, CacheRule
from planning.naming import Naming, parse_resource_id, storage_account_name
from planning.network_policy import NamespaceTraffic
from planning.priorities import PLATFORM_CRITICAL
from planning.private_link import ZONE_BY_GROUP_ID, api_server_zone
from stackconfig.model import EventHubsConfig, PlatformConfig

STORAGE_ROLES = {"read": "Storage Blob Data Reader", "write": "Storage Blob Data Contributor"}

API_SERVER_DELEGATION = "Microsoft.ContainerService/managedClusters"
PRIVATE_ENDPOINT_SUBNET = "private-endpoints"
FIREWALL_SUBNET = "firewall"
# Namespaces whose node agents need host access (Pod Security `privileged`).
PRIVILEGED_NAMESPACES = (GPU_OPERATOR_NAMESPACE, NETWORK_OPERATOR_NAMESPACE)


def firewall_spec(
    config: PlatformConfig, region: str, log_analytics_workspace_id: pulumi.Input[str]
) -> FirewallSpec | None:
    """The region's firewall with userDefinedRouting: its rules, sources and zones."""
    egress = config.network.egress
    if egress.outbound_type != "userDefinedRouting":
        return None
    clusters = [cluster for cluster in config.clusters.values() if cluster.region == region]
    sources = [
        str(subnet)
        for cluster in clusters
        for subnet in (cluster.subnets.system, cluster.subnets.nodes, cluster.subnets.pods)
        if subnet is not None
    ]
    return FirewallSpec(
        settings=egress.firewall,
        rules=egress_plan.application_rules(
            region,
            allowed_fqdns=list(egress.firewall.allowed_fqdns),
            team_fqdns={team: list(spec.egress_fqdns) for team, spec in config.teams.items()},
            driver_builds=any(egress_plan.builds_drivers(cluster) for cluster in clusters),
        ),
        source_ranges=sources,
        zones=sorted({zone for cluster in clusters for zone in cluster.zones}) or ["1", "2", "3"],
        log_analytics_workspace_id=log_analytics_workspace_id,
    )


def region_subnets(config: PlatformConfig, region: str) -> list[SubnetSpec]:
    """The subnets of one region's VNet, in creation order, keyed `<cluster>-<role>`."""
    vnet = config.network.regions[region]
    specs = []
    if config.network.egress.outbound_type == "userDefinedRouting" and vnet.subnets.firewall is not None:
        specs.append(SubnetSpec(FIREWALL_SUBNET, "firewall", vnet.subnets.firewall, firewall=True))
    specs.append(SubnetSpec(PRIVATE_ENDPOINT_SUBNET, "privateEndpoints", vnet.subnets.private_endpoints))
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


def private_dns_zones(config: PlatformConfig) -> list[str]:
    """The zones this environment's private endpoints and private API servers need."""
    group_ids = ["vault", "registry"]
    if config.storage.accounts:
        group_ids.append("blob")
    if any(account.hierarchical_namespace for account in config.storage.accounts.values()):
        group_ids.append("dfs")
    if config.kafka and config.kafka.engine == "eventhubs":
        group_ids.append("namespace")
    zones = [ZONE_BY_GROUP_ID[group_id] for group_id in group_ids]
    private_regions = dict.fromkeys(c.region for c in config.clusters.values() if c.api_server.private)
    return zones + [api_server_zone(region) for region in private_regions]


def cache_rules(config: PlatformConfig) -> tuple[CacheRule, ...]:
    """The platform's own pull-through rules, then the teams' from config."""
    extra = tuple(CacheRule(name, rule.source, rule.target) for name, rule in config.registry.cache_rules.items())
    return PLATFORM_CACHE_RULES + extra


def workload_grants(config: PlatformConfig, workload: str, storage, vault: KeyVault) -> list[Grant]:
    """Each storage container and Key Vault secret the workload may touch, as a scoped grant."""
    spec = config.workloads[workload]
    grants = [
        Grant(STORAGE_ROLES[access], storage.container_ids[account][container], f"storage/{account}/{container}")
        for account, containers in spec.storage.items()
        for container, access in containers.items()
    ]
    grants += [
        Grant(
            "Key Vault Secrets User",
            pulumi.Output.concat(vault.vault_id, "/secrets/", secret),
            f"keyvault/secrets/{secret}",
        )
        for secret in spec.key_vault_secrets
    ]
    return grants


@dataclass(frozen=True)
class PlatformArgs:
    config: PlatformConfig


@dataclass(frozen=True)
class KafkaParts:
    """What the event backbone is built from: the config and the parts made before it."""

    config: PlatformConfig
    naming: Naming
    tenancies: dict[str, ClusterTenancy]
    registry: ContainerRegistry
    service: DataPlaneSettings
    dns: PrivateDns
    deployer: pulumi.Output[authorization.GetClientConfigResult]
    # Every namespace the platform creates, per cluster, with the traffic it may have.
    traffic: dict[str, dict[str, NamespaceTraffic]]
    admission: dict[str, ClusterAdmission]


class Platform(pulumi.ComponentResource):
    clusters: dict[str, AksCluster]
    networks: dict[str, RegionalNetwork]

    def __init__(self, name: str, args: PlatformArgs, opts: pulumi.ResourceOptions | None = None):
        super().__init__("platform:index:Platform", name, None, opts)
        config = args.config
        naming = Naming(config.prefix, config.environment)
        tags = {"environment": config.environment, **config.tags, "managed-by": "pulumi"}
        # Providers for other subscriptions (the hub's), made once however many parts need one.
        self._providers: dict[str, pulumi_azure_native.Provider] = {}
        child = pulumi.ResourceOptions(parent=self)
        deployer = authorization.get_client_config_output(opts=pulumi.InvokeOutputOptions(parent=self))
        primary_region = config.primary_region

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
        self.networks = self._networks(config, naming, tags, observability.log_analytics_workspace_id)
        dns = self._private_dns(config, naming, tags)
        service = DataPlaneSettings(
            naming=naming,
            region=primary_region,
            endpoints=PrivateEndpoints(
                region=primary_region,
                subnet_id=self.networks[primary_region].subnet_ids[PRIVATE_ENDPOINT_SUBNET],
                zone_ids=dns.zone_ids,
            ),
            log_analytics_workspace_id=observability.log_analytics_workspace_id,
            protect=config.protect,
            lock=config.lock_stateful_resources,
            tags=tags,
        )
        vault = KeyVault(
            "keyvault",
            KeyVaultArgs(
                service=service,
                tenant_id=deployer.tenant_id,
                subscription_id=deployer.subscription_id,
                settings=config.key_vault,
                storage_encryption_key=config.storage.customer_managed_key,
            ),
            opts=child,
        )
        registry = ContainerRegistry(
            "registry",
            ContainerRegistryArgs(
                service=service,
                replica_regions=[region for region in config.network.regions if region != primary_region],
                settings=config.registry,
                cache_rules=cache_rules(config),
            ),
            opts=child,
        )
        storage = PrivateStorage(
            "storage",
            PrivateStorageArgs(
                service=service,
                settings=config.storage,
                account_names={key: storage_account_name(config, key) for key in config.storage.accounts},
                subscription_id=deployer.subscription_id,
                encryption_key=vault.storage_key,
            ),
            opts=child,
        )

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
                        api_server_dns_zone_id=dns.zone_ids.get(api_server_zone(cluster.region)),
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
                    registry_id=registry.registry_id,
                    fleet_managed=config.has_fleet,
                    kafka_pools=kafka_plan.kafka_node_pools(config) if key in config.kafka_clusters() else {},
                    egress_ips=list(regional.egress_ips),
                    network_ready=[
                        link
                        for (zone, vnet), link in dns.links.items()
                        if cluster.api_server.private
                        and zone == api_server_zone(cluster.region)
                        and vnet == naming.regional("vnet", cluster.region)
                    ],
                    tags={**tags, "cluster": key},
                ),
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

        mirrors = kafka_plan.mirror_clusters(config)
        workloads = [
            WorkloadSpec(
                name=workload,
                namespace=spec.namespace,
                service_account=spec.service_account,
                issuers={c: self.clusters[c].oidc_issuer_url for c in config.workload_clusters(workload)},
                grants=workload_grants(config, workload, storage, vault),
            )
            for workload, spec in config.workloads.items()
        ]
        if mirrors:
            # MirrorMaker signs in to every cluster's Kafka with an identity of its own.
            workloads.append(
                WorkloadSpec(
                    name=kafka_plan.MIRROR_WORKLOAD,
                    namespace=kafka_plan.KAFKA_NAMESPACE,
                    service_account=kafka_plan.MIRROR_SERVICE_ACCOUNT,
                    issuers={c: self.clusters[c].oidc_issuer_url for c in mirrors},
                    grants=[],
                )
            )
        self.identities = WorkloadIdentities(
            "workloads",
            WorkloadIdentitiesArgs(
                naming=naming,
                region=primary_region,
                workloads=workloads,
                subscription_id=deployer.subscription_id,
                tags=tags,
            ),
            opts=child,
        )

        tenancies: dict[str, ClusterTenancy] = {}
        admission: dict[str, ClusterAdmission] = {}
        # Every namespace the platform creates, per cluster, with the traffic it may have.
        traffic = {key: cluster_traffic(config, key) for key in config.clusters}
        for key, cluster in config.clusters.items():
            aks = self.clusters[key]
            tenancy = tenancies[key] = ClusterTenancy(
                f"tenancy-{key}",
                ClusterTenancyArgs(
                    environment=config.environment,
                    cluster_key=key,
                    cluster_id=aks.cluster_id,
                    teams=dict(config.teams),
                    admin_group_object_ids=list(config.entra.admin_group_object_ids),
                    service_accounts=[
                        ServiceAccountSpec(
                            workload,
                            spec.namespace,
                            spec.service_account,
                            self.identities.client_ids[workload],
                            kubernetes_api=spec.kubernetes_api,
                        )
                        for workload, spec in config.workloads.items()
                        if key in config.workload_clusters(workload)
                    ],
                    tenant_id=config.entra.tenant_id or deployer.tenant_id,
                    subscription_id=deployer.subscription_id,
                    traffic=traffic[key],
                ),
                provider=aks.kubernetes_provider,
                opts=child,
            )
            admission[key] = ClusterAdmission(
                f"admission-{key}",
                ClusterAdmissionArgs(
                    cluster_key=key,
                    cluster_id=aks.cluster_id,
                    login_server=registry.login_server,
                    settings=config.admission,
                    privileged_namespaces=[ns for ns in traffic[key] if ns in PRIVILEGED_NAMESPACES],
                    training_namespaces=[ns for team in config.teams.values() for ns in team.training_namespaces],
                ),
                provider=aks.kubernetes_provider,
                opts=child,
            )
            gpu_pools = capacity.plan_cluster(config, key).gpu_pools
            if gpu_pools:
                GpuStack(
                    f"gpu-{key}",
                    GpuStackArgs(
                        cluster=cluster,
                        gpu_pools=gpu_pools,
                        teams=dict(config.teams),
                        team_namespaces=tenancy.namespaces,
                        login_server=registry.login_server,
                        # Also the DNS links: a node resolves the registry only once its VNet is linked.
                        pull_ready=[*registry.ready, dns, aks.kubelet_pull_grant],
                        traffic=traffic[key],
                        priority_class=PLATFORM_CRITICAL.name,
                        ready=admission[key].ready,
                    ),
                    provider=aks.kubernetes_provider,
                    opts=child,
                )
            if config.entra.plan_identity is not None:
                PlanAccess(
                    f"plan-access-{key}",
                    PlanAccessArgs(
                        environment=config.environment,
                        cluster_key=key,
                        cluster_id=aks.cluster_id,
                        namespaces=component_namespaces(config, key),
                        plan_identity=config.entra.plan_identity,
                        subscription_id=deployer.subscription_id,
                    ),
                    opts=child,
                )

        self.kafka_connections = self._kafka(
            KafkaParts(config, naming, tenancies, registry, service, dns, deployer, traffic, admission)
        )

        self.register_outputs(
            {
                "clusters": {key: c.cluster_name for key, c in self.clusters.items()},
                "registryLoginServer": registry.login_server,
                "workloadClientIds": self.identities.client_ids,
            }
        )
        self.registry = registry
        self.storage = storage
        self.vault = vault

    def _kafka(self, parts: KafkaParts) -> dict[str, dict[str, Any]]:
        """The event backbone on the configured engine; returns each client's connection info."""
        config, tenancies, registry, service, dns, deployer = (
            parts.config,
            parts.tenancies,
            parts.registry,
            parts.service,
            parts.dns,
            parts.deployer,
        )
        kafka = config.kafka
        if kafka is None:
            return {}
        principal_ids = self.identities.principal_ids
        # Managed identities, and so their tokens, belong to the subscription's tenant.
        tenant_id = deployer.tenant_id
        child = pulumi.ResourceOptions(parent=self)
        if kafka.engine == "eventhubs":
            settings = kafka.event_hubs or EventHubsConfig()
            backbone = EventHubsBackbone(
                "events",
                EventHubsBackboneArgs(
                    service=service,
                    kafka=kafka,
                    settings=settings,
                    principal_ids={client: principal_ids[client] for client in kafka.clients},
                    subscription_id=deployer.subscription_id,
                ),
                opts=child,
            )
            return {
                client: kafka_plan.connection_info(config, client, backbone.namespace_name) for client in kafka.clients
            }

        strimzi = kafka.strimzi
        assert strimzi is not None
        hosts, mirrors = config.kafka_clusters(), kafka_plan.mirror_clusters(config)
        mirror_identity = (
            MirrorIdentity(
                self.identities.client_ids[kafka_plan.MIRROR_WORKLOAD], principal_ids[kafka_plan.MIRROR_WORKLOAD]
            )
            if mirrors
            else None
        )
        kafkas: dict[str, StrimziKafka] = {}
        for key in hosts:
            cluster = config.clusters[key]
            kafkas[key] = StrimziKafka(
                f"kafka-{key}",
                StrimziKafkaArgs(
                    cluster_key=key,
                    kafka=kafka,
                    clients=[
                        KafkaClientSpec(
                            client, config.workloads[client].namespace, spec.authentication, principal_ids[client]
                        )
                        for client, spec in kafka.clients.items()
                        if key in config.workload_clusters(client)
                    ],
                    tenant_id=tenant_id,
                    remote_clusters=[other for other in mirrors if other != key],
                    mirror=mirror_identity,
                    replication=ReplicationEndpoint(
                        bootstrap_address=kafka_plan.replication_bootstrap_address(config, key),
                        subnet_name=parts.naming.regional("snet", cluster.region, f"{key}-nodes"),
                        peer_ranges=kafka_plan.mirror_peer_ranges(config, key),
                    )
                    if key in mirrors
                    else None,
                    login_server=registry.login_server,
                    pull_ready=[*registry.ready, dns, self.clusters[key].kubelet_pull_grant],
                    protect=config.protect,
                    team_namespaces=tenancies[key].namespaces,
                    traffic=parts.traffic[key][kafka_plan.KAFKA_NAMESPACE],
                    ready=parts.admission[key].ready,
                ),
                provider=self.clusters[key].kubernetes_provider,
                opts=child,
            )
        for key in mirrors:
            assert mirror_identity is not None  # made whenever there are mirrors
            KafkaMirror(
                f"kafka-mirror-{key}",
                KafkaMirrorArgs(
                    cluster_key=key,
                    kafka=kafka,
                    sources=[
                        MirrorSource(
                            other,
                            kafka_plan.replication_bootstrap_address(config, other),
                            self.clusters[other].kubernetes_provider,
                            kafkas[other].kafka,
                        )
                        for other in mirrors
                        if other != key
                    ],
                    identity=mirror_identity,
                    tenant_id=tenant_id,
                    local_kafka=kafkas[key].kafka,
                ),
                provider=self.clusters[key].kubernetes_provider,
                opts=child,
            )
        return {client: kafka_plan.connection_info(config, client) for client in kafka.clients}

    def _subscription_provider(self, subscription: str, former_name: str | None = None) -> pulumi_azure_native.Provider:
        """A provider for another subscription (the hub's connectivity subscription), made once."""
        if subscription not in self._providers:
            self._providers[subscription] = pulumi_azure_native.Provider(
                f"subscription-{subscription}",
                subscription_id=subscription,
                opts=pulumi.ResourceOptions(
                    parent=self, aliases=[pulumi.Alias(name=former_name)] if former_name else None
                ),
            )
        return self._providers[subscription]

    def _networks(
        self,
        config: PlatformConfig,
        naming: Naming,
        tags: dict[str, str],
        log_analytics_workspace_id: pulumi.Input[str],
    ) -> dict[str, RegionalNetwork]:
        egress, hub = config.network.egress, config.network.hub
        hub_provider = None
        if hub and hub.create_hub_side_peering:
            # Named `hub-subscription` before it also served the hub's DNS zones.
            hub_provider = self._subscription_provider(
                parse_resource_id(hub.virtual_network_id).subscription, former_name="hub-subscription"
            )
        networks: dict[str, RegionalNetwork] = {}
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
                    firewall=firewall_spec(config, region, log_analytics_workspace_id),
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
                    tags=tags,
                ),
                opts=pulumi.ResourceOptions(parent=self),
            )
            previous_hub_peering = regional.hub_side_peering or previous_hub_peering
            networks[region] = regional
        # Regions of one environment reach each other directly (e.g. Kafka mirroring).
        for first, second in combinations(networks.values(), 2):
            peer_regions(first, second, parent=self)
        return networks

    def _private_dns(self, config: PlatformConfig, naming: Naming, tags: dict[str, str]) -> PrivateDns:
        hub = config.network.hub
        vnet_ids: dict[str, pulumi.Input[str]] = {
            naming.regional("vnet", region): network.vnet_id for region, network in self.networks.items()
        }
        central = None
        if hub and hub.private_dns_zones_resource_group_id:
            zones_group = hub.private_dns_zones_resource_group_id
            central = CentralZones(zones_group, self._subscription_provider(zones_group.split("/")[2]))
        elif hub:
            # Our zones: deploy runners and resolvers in the hub must resolve them too.
            vnet_ids[parse_resource_id(hub.virtual_network_id).name] = hub.virtual_network_id
        return PrivateDns(
            "dns",
            PrivateDnsArgs(
                naming=naming,
                region=config.primary_region,
                zones=private_dns_zones(config),
                vnet_ids=vnet_ids,
                central=central,
                tags=tags,
            ),
            opts=pulumi.ResourceOptions(parent=self),
        )
