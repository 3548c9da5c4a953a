"""The environment, as deployment units (planning/layers.py), in the order they are deployed:

1. `foundation`: observability, one network per region (peered with each other and the hub),
   private DNS, Key Vault, the container registry, the workloads' managed identities;
2. `data`: storage accounts (customer-managed keys from the foundation's vault), Event Hubs;
3. `cluster`, one per cluster: AKS and its pools, admission policies and PriorityClasses, the
   GPU stack, plan access, the Strimzi operator and its Kafka; every platform namespace denies
   all traffic but its allows;
4. `tenants`: the workloads' federated credentials and grants, team namespaces, service
   accounts and RBAC, Kueue queues, Kafka topics, users and CA copies, MirrorMaker;
5. `fleet`, with two or more clusters: Fleet Manager, members, update runs.

`deploy` builds one unit, reading the units before it through `pulumi.StackReference` and
the contracts of components/outputs.py. `Platform` builds every unit in one stack, wired in
process: the single-stack layout a deployed environment moves from (docs/migration.md), and
the reference tests/test_deployment_units.py holds the units' union to.

This is the only place that knows how capabilities connect; each component below it takes
plain typed arguments and can be read on its own.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import partial
from itertools import combinations
from typing import Any

import pulumi
import pulumi_azure_native
import pulumi_kubernetes as kubernetes
from pulumi_azure_native import authorization

from components.admission import ClusterAdmission, ClusterAdmissionArgs
from components.alerting import ActionGroups, ActionGroupsArgs, ClusterAlerts, ClusterAlertsArgs
from components.cluster import AksCluster, AksClusterArgs, ClusterMonitoring, ClusterNetwork
from components.dispatch import (
    ClusterAccess,
    DispatchRefresher,
    DispatchRefresherArgs,
    DispatchWorker,
    DispatchWorkerArgs,
    JobDispatch,
    JobDispatchArgs,
)
from components.event_hubs import EventHubsBackbone, EventHubsBackboneArgs
from components.fleet import FleetArgs, FleetMemberSpec, KubernetesFleet
from components.gpu_health import GpuHealth, GpuHealthArgs
from components.gpu_stack import GpuStack, GpuStackArgs, TeamQueues, TeamQueuesArgs
from components.grafana import ManagedGrafana, ManagedGrafanaArgs
from components.kafka import (
    KafkaAccess,
    KafkaAccessArgs,
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
from components.monitoring_private_link import MonitoringPrivateLink, MonitoringPrivateLinkArgs
from components.network import (
    FirewallSpec,
    HubPeeringSpec,
    RegionalNetwork,
    RegionalNetworkArgs,
    SubnetSpec,
    peer_regions,
)
from components.observability import ClusterLogSettings, ClusterLogSettingsArgs, Observability, ObservabilityArgs
from components.outputs import ClusterOutputs, DataOutputs, FoundationOutputs
from components.private_dns import (
    CentralZones,
    DataPlaneSettings,
    PrivateDns,
    PrivateDnsArgs,
    PrivateEndpoints,
    RegionalEndpoints,
)
from components.registry import ContainerRegistry, ContainerRegistryArgs
from components.storage import PrivateStorage, PrivateStorageArgs
from components.streaming import StreamingJobs, StreamingJobsArgs, StreamingPlatform, StreamingPlatformArgs
from components.tenancy import ClusterAdmins, ClusterAdminsArgs, ClusterTenancy, ClusterTenancyArgs, ServiceAccountSpec
from components.workload_identity import (
    Grant,
    WorkloadAccess,
    WorkloadAccessArgs,
    WorkloadIdentities,
    WorkloadIdentitiesArgs,
    WorkloadSpec,
)
from planning import alerts as alerts_plan
from planning import capacity
from planning import dispatch as dispatch_plan
from planning import egress as egress_plan
from planning import kafka as kafka_plan
from planning import streaming as streaming_plan
from planning.charts import HELM_DRIVER, SYSTEM_POOL_TOLERATION
from planning.cluster_traffic import (
    GPU_HEALTH_NAMESPACE,
    GPU_OPERATOR_NAMESPACE,
    KUEUE_NAMESPACE,
    NETWORK_OPERATOR_NAMESPACE,
    cluster_traffic,
)
from planning.images import PLATFORM_CACHE_RULES, CacheRule
from planning.layers import Unit
from planning.naming import (
    Naming,
    parse_resource_id,
    region_code,
    replica_account_name,
    replica_region,
    storage_account_name,
)
from planning.network_policy import NamespaceTraffic
from planning.priorities import PLATFORM_CRITICAL
from planning.private_link import ZONE_BY_GROUP_ID, api_server_zone, zones_of
from planning.workloads import workload_context
from stackconfig.model import EventHubsConfig, PlatformConfig

STORAGE_ROLES = {"read": "Storage Blob Data Reader", "write": "Storage Blob Data Contributor"}

API_SERVER_DELEGATION = "Microsoft.ContainerService/managedClusters"
PRIVATE_ENDPOINT_SUBNET = "private-endpoints"
FIREWALL_SUBNET = "firewall"
# Namespaces whose node agents need host access (Pod Security `privileged`).
PRIVILEGED_NAMESPACES = (GPU_OPERATOR_NAMESPACE, NETWORK_OPERATOR_NAMESPACE, GPU_HEALTH_NAMESPACE)


def alert_routes(
    config: PlatformConfig, action_group_ids: Mapping[str, pulumi.Input[str]]
) -> dict[str, list[pulumi.Input[str]]]:
    """Severity -> the action groups its alerts reach (platform:operations.alerts.routes)."""
    return {
        severity: [action_group_ids[receiver] for receiver in receivers]
        for severity, receivers in config.operations.alerts.routes.items()
    }


def firewall_spec(
    config: PlatformConfig,
    region: str,
    log_analytics_workspace_id: pulumi.Input[str],
    routes: Mapping[str, list[pulumi.Input[str]]] | None = None,
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
        alert_routes=routes or {},
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
    data_plane = data_plane_zones(config)
    grafana = [ZONE_BY_GROUP_ID["grafana"]] if config.operations.grafana.enabled else []
    # On the hub's scope, the hub's endpoint writes the Azure Monitor zones: every VNet of the
    # environment links to them, or its agents would resolve the public endpoints the
    # workspaces refuse.
    scope = config.operations.private_link_scope
    monitor = [z for z in zones_of("azuremonitor") if z not in data_plane] if scope.enabled and scope.scope_id else []
    return data_plane + grafana + monitor + api_server_zones(config)


def api_server_zones(config: PlatformConfig) -> list[str]:
    """The zones the environment's private API servers register in, one per region."""
    private_regions = dict.fromkeys(c.region for c in config.clusters.values() if c.api_server.private)
    return [cluster_api_server_zone(config, region) for region in private_regions]


def own_hub_zones(config: PlatformConfig) -> list[str]:
    """The environment's own zones among the hub's shared ones: its API server subzones (none
    without shared zones). It links its VNets there; the bootstrap's `--api-server-zone`."""
    return api_server_zones(config) if shared_hub_zones(config) else []


def shared_hub_zones(config: PlatformConfig) -> bool:
    """Whether the hub's zones serve this environment (and others): then the hub's owner links
    them, and the environment's API servers register in subzones of its own."""
    return bool(config.network.hub and config.network.hub.private_dns_zones_resource_group_id)


def cluster_api_server_zone(config: PlatformConfig, region: str) -> str:
    """The zone a private cluster of `region` registers its API server in: the region's, or the
    environment's own subzone of the hub's."""
    subzone = Naming(config.prefix, config.environment).api_server_subzone() if shared_hub_zones(config) else None
    return api_server_zone(region, subzone)


def endpoint_regions(config: PlatformConfig) -> list[str]:
    """Regions that reach the data plane through endpoints of their own: every region with a
    cluster, the primary first (its endpoints keep the names they always had)."""
    return list(dict.fromkeys([config.primary_region, *(c.region for c in config.clusters.values())]))


def data_plane_zones(config: PlatformConfig) -> list[str]:
    """The privatelink zones of the environment's data-plane endpoints."""
    group_ids = ["vault", "registry"]
    if config.storage.accounts:
        group_ids.append("blob")
    if any(account.hierarchical_namespace for account in config.storage.accounts.values()):
        group_ids.append("dfs")
    if config.kafka and config.kafka.engine == "eventhubs":
        group_ids.append("namespace")
    if own_monitoring_scope(config):
        group_ids.append("azuremonitor")
    return list(dict.fromkeys(zone for group_id in group_ids for zone in zones_of(group_id)))


def own_monitoring_scope(config: PlatformConfig) -> bool:
    """Whether the environment creates its own Azure Monitor private link scope (its own zones),
    rather than joining the hub's (config validation: the hub's zones come with the hub's scope)."""
    scope = config.operations.private_link_scope
    return scope.enabled and scope.scope_id is None


def cache_rules(config: PlatformConfig) -> tuple[CacheRule, ...]:
    """The platform's own pull-through rules, then the teams' from config."""
    extra = tuple(CacheRule(name, rule.source, rule.target) for name, rule in config.registry.cache_rules.items())
    return PLATFORM_CACHE_RULES + extra


def workload_grants(
    config: PlatformConfig,
    workload: str,
    data: DataOutputs,
    vault_ids: Mapping[str, pulumi.Input[str]],
) -> list[Grant]:
    """Each storage container and Key Vault secret the workload may touch, as a scoped grant:
    on the replicas' copies too, and on every region's vault (decision 0008), so it finds its
    data wherever it runs or fails over to. A write grant on a replica takes effect once a
    person ends the replication (the runbook); until then Azure refuses writes to the copy."""
    spec = config.workloads[workload]
    grants = [
        Grant(STORAGE_ROLES[access], data.container_ids[account][container], f"storage/{account}/{container}")
        for account, containers in spec.storage.items()
        for container, access in containers.items()
    ]
    grants += [
        Grant(
            STORAGE_ROLES[access],
            data.replica_container_ids[account][container],
            f"storage/{account}-replica/{container}",
        )
        for account, containers in spec.storage.items()
        if account in data.replica_container_ids
        for container, access in containers.items()
    ]
    grants += [
        Grant(
            "Key Vault Secrets User",
            pulumi.Output.concat(vault_id, "/secrets/", secret),
            f"{vault_key(config, region)}/secrets/{secret}",
        )
        for region, vault_id in vault_ids.items()
        for secret in spec.key_vault_secrets
    ]
    return grants


def vault_key(config: PlatformConfig, region: str) -> str:
    """A region's vault's logical name: the primary's keeps the one it always had."""
    return "keyvault" if region == config.primary_region else f"keyvault-{region_code(region)}"


def replicas(config: PlatformConfig) -> dict[str, tuple[str, str]]:
    """Account key -> (region, name) of its object-replication replica."""
    found = {}
    for account_key in config.storage.accounts:
        region = replica_region(config, account_key)
        if region is not None:
            found[account_key] = (region, replica_account_name(config, account_key))
    return found


def identity_workloads(config: PlatformConfig) -> list[str]:
    """Workloads with a managed identity: the configured ones, MirrorMaker where it runs, and
    MultiKueue's dispatchers where there are any."""
    return (
        list(config.workloads)
        + ([kafka_plan.MIRROR_WORKLOAD] if kafka_plan.mirror_clusters(config) else [])
        + ([dispatch_plan.DISPATCH_WORKLOAD] if config.jobs.dispatchers else [])
    )


def subnet_keys(config: PlatformConfig) -> dict[str, list[str]]:
    """Region -> the keys of its subnets (the foundation's `subnetIds`)."""
    return {region: [spec.key for spec in region_subnets(config, region)] for region in config.network.regions}


@dataclass
class Context:
    """What every unit is built from: the whole validated config and where its resources go."""

    config: PlatformConfig
    # The stack's root component in the single-stack layout; None (the stack) for a unit.
    parent: pulumi.Resource | None = None
    naming: Naming = field(init=False)
    tags: dict[str, str] = field(init=False)
    deployer: pulumi.Output[authorization.GetClientConfigResult] = field(init=False)
    # Providers for other subscriptions (the hub's), made once however many parts need one.
    providers: dict[str, pulumi_azure_native.Provider] = field(init=False, default_factory=dict)

    def __post_init__(self) -> None:
        config = self.config
        self.naming = Naming(config.prefix, config.environment)
        self.tags = {"environment": config.environment, **config.tags, "managed-by": "pulumi"}
        self.deployer = authorization.get_client_config_output(opts=pulumi.InvokeOutputOptions(parent=self.parent))

    @property
    def opts(self) -> pulumi.ResourceOptions:
        return pulumi.ResourceOptions(parent=self.parent)

    def subscription_provider(self, subscription: str, former_name: str | None = None) -> pulumi_azure_native.Provider:
        """A provider for another subscription (the hub's connectivity subscription), made once."""
        if subscription not in self.providers:
            # At the stack's root, in every layout: `pulumi state move` copies providers with their
            # parent (docs/migration.md). The aliases keep it where it was the Platform's child,
            # under its former name too.
            aliases = []
            if self.parent is not None:
                aliases.append(pulumi.Alias(parent=self.parent))
                if former_name:
                    aliases.append(pulumi.Alias(name=former_name, parent=self.parent))
            self.providers[subscription] = pulumi_azure_native.Provider(
                f"subscription-{subscription}",
                subscription_id=subscription,
                opts=pulumi.ResourceOptions(aliases=aliases or None),
            )
        return self.providers[subscription]

    def data_plane(
        self,
        subnet_ids: Mapping[str, Mapping[str, pulumi.Input[str]]],
        zone_ids: Mapping[str, pulumi.Input[str]],
        regional_zone_ids: Mapping[str, Mapping[str, pulumi.Input[str]]],
        workspace_ids: Mapping[str, pulumi.Input[str]],
    ) -> DataPlaneSettings:
        """Where the private data-plane services go: the primary region, with an endpoint in
        every region with clusters, each in its region's zones; logs to their region's
        workspace (`workspace_ids`: region -> Log Analytics workspace)."""
        config, region = self.config, self.config.primary_region
        return DataPlaneSettings(
            naming=self.naming,
            region=region,
            endpoints=RegionalEndpoints(
                [
                    PrivateEndpoints(
                        region=r,
                        subnet_id=subnet_ids[r][PRIVATE_ENDPOINT_SUBNET],
                        zone_ids=zone_ids if r == region else regional_zone_ids[r],
                        suffix="" if r == region else f"-{region_code(r)}",
                    )
                    for r in endpoint_regions(config)
                ]
            ),
            log_analytics_workspace_id=workspace_ids[region],
            workspace_ids=workspace_ids,
            protect=config.protect,
            lock=config.lock_stateful_resources,
            tags=self.tags,
        )


def build_foundation(ctx: Context) -> FoundationOutputs:
    config, naming = ctx.config, ctx.naming
    region = config.primary_region
    # Workspaces per region with clusters: each region's clusters, firewall and data plane keep
    # their logs and metrics flowing while another region is down (decision 0008).
    observability = {
        r: Observability(
            "ops" if r == region else f"ops-{region_code(r)}",
            ObservabilityArgs(
                naming=naming,
                region=r,
                retention_days=config.operations.log_retention_days,
                protect=config.protect,
                tags=ctx.tags,
                container_logs=config.operations.container_logs,
                private_ingestion=config.operations.private_link_scope.enabled,
            ),
            opts=ctx.opts,
        )
        for r in endpoint_regions(config)
    }
    workspace_ids = {r: o.log_analytics_workspace_id for r, o in observability.items()}
    alerts = config.operations.alerts
    action_groups = ActionGroups(
        "alerts",
        ActionGroupsArgs(
            settings=alerts,
            names={receiver: naming.name("ag", receiver) for receiver in alerts.receivers},
            resource_group_name=observability[region].resource_group_name,
            tags=ctx.tags,
        ),
        opts=ctx.opts,
    )
    routes = alert_routes(config, action_groups.ids)
    networks = _networks(ctx, workspace_ids, routes)
    dns, regional_dns = _private_dns(ctx, networks)
    subnet_ids = {r: n.subnet_ids for r, n in networks.items()}
    regional_zone_ids = {r: d.zone_ids for r, d in regional_dns.items()}
    service = ctx.data_plane(subnet_ids, dns.zone_ids, regional_zone_ids, workspace_ids)
    scope = config.operations.private_link_scope
    monitoring_link = None
    if scope.enabled:
        monitoring_link = MonitoringPrivateLink(
            "monitoring-link",
            MonitoringPrivateLinkArgs(
                naming=naming,
                settings=scope,
                resource_group_name=observability[region].resource_group_name,
                workspace_ids=workspace_ids,
                endpoint_ids={r: o.data_collection_endpoint_id for r, o in observability.items()},
                endpoints=service.endpoints,
                tags=ctx.tags,
            ),
            # Endpoints register in zones linked to the VNets, as every data-plane endpoint.
            opts=pulumi.ResourceOptions.merge(
                ctx.opts,
                pulumi.ResourceOptions(
                    depends_on=[
                        *dns.links.values(),
                        *(link for d in regional_dns.values() for link in d.links.values()),
                    ]
                ),
            ),
        )
    # A vault per region with clusters: Key Vault replicates only to its paired region, so each
    # region's secrets and keys are its own (decision 0008).
    vaults = {
        r: KeyVault(
            vault_key(config, r),
            KeyVaultArgs(
                service=dataclasses.replace(service, region=r, log_analytics_workspace_id=service.workspace(r)),
                tenant_id=ctx.deployer.tenant_id,
                subscription_id=ctx.deployer.subscription_id,
                settings=config.key_vault,
                storage_encryption_key=config.storage.customer_managed_key,
                alert_routes=routes,
            ),
            opts=ctx.opts,
        )
        for r in endpoint_regions(config)
    }
    registry = ContainerRegistry(
        "registry",
        ContainerRegistryArgs(
            service=service,
            replica_regions=[r for r in config.network.regions if r != region],
            settings=config.registry,
            cache_rules=cache_rules(config),
        ),
        opts=ctx.opts,
    )
    grafana_settings = config.operations.grafana
    grafana_endpoint = None
    if grafana_settings.enabled:
        grafana_endpoint = ManagedGrafana(
            "grafana",
            ManagedGrafanaArgs(
                naming=naming,
                region=region,
                resource_group_name=observability[region].resource_group_name,
                zone_redundant=grafana_settings.zone_redundant,
                admin_group_ids=list(grafana_settings.admins or config.entra.admin_group_object_ids),
                viewer_group_ids=list(grafana_settings.viewers),
                monitor_workspace_ids={r: o.monitor_workspace_id for r, o in observability.items()},
                log_analytics_workspace_ids=workspace_ids,
                endpoints=service.endpoints.regions[0],
                subscription_id=ctx.deployer.subscription_id,
                tags=ctx.tags,
            ),
            opts=pulumi.ResourceOptions.merge(ctx.opts, pulumi.ResourceOptions(depends_on=list(dns.links.values()))),
        ).endpoint
    identities = WorkloadIdentities(
        "workloads",
        WorkloadIdentitiesArgs(naming=naming, region=region, workloads=identity_workloads(config), tags=ctx.tags),
        opts=ctx.opts,
    )
    return FoundationOutputs(
        log_analytics_workspace_id=observability[region].log_analytics_workspace_id,
        monitor_workspace_id=observability[region].monitor_workspace_id,
        action_group_ids=action_groups.ids,
        data_collection_endpoint_id=observability[region].data_collection_endpoint_id,
        regional_workspaces={
            r: {
                "logAnalytics": o.log_analytics_workspace_id,
                "monitor": o.monitor_workspace_id,
                "dataCollectionEndpoint": o.data_collection_endpoint_id,
            }
            for r, o in observability.items()
            if r != region
        },
        vnet_ids={r: n.vnet_id for r, n in networks.items()},
        subnet_ids=subnet_ids,
        egress_ips={r: n.egress_ips for r, n in networks.items()},
        dns_zone_ids=dns.zone_ids,
        regional_dns_zone_ids=regional_zone_ids,
        registry_id=registry.registry_id,
        grafana_endpoint=grafana_endpoint,
        key_vault_ids={r: vault.vault_id for r, vault in vaults.items()},
        storage_keys={r: vault.storage_key for r, vault in vaults.items() if vault.storage_key is not None},
        identity_client_ids=identities.client_ids,
        identity_principal_ids=identities.principal_ids,
        identity_names=identities.names,
        identity_resource_group=identities.resource_group_name,
        after=(*registry.ready, dns, *regional_dns.values()),
        dns_links=dns.links,
        hub_requests=_hub_requests(ctx, networks, dns, monitoring_link),
    )


def _hub_requests(
    ctx: Context,
    networks: Mapping[str, RegionalNetwork],
    dns: PrivateDns,
    monitoring_link: MonitoringPrivateLink | None,
) -> dict[str, Any] | None:
    """What the hub's owner makes for this environment, which it may not write itself: the hub's
    side of each peering, the links of the hub's shared zones to its VNets, its API server
    subzones (made in the hub's zones and linked to the hub's VNet, where runners resolve them)
    and its members of the hub's Azure Monitor scope (docs/deploying.md, "The hub")."""
    config, naming = ctx.config, ctx.naming
    hub = config.network.hub
    if hub is None:
        return None
    requests: dict[str, Any] = {}
    if not hub.create_hub_side_peering:
        requests["peerings"] = [
            {
                "name": f"peer-to-{naming.regional('vnet', region)}",
                "remoteVirtualNetworkId": network.vnet_id,
                # As the hub's half always was (components/network.py): the spoke's return traffic
                # from the hub's firewall arrives forwarded.
                "allowVirtualNetworkAccess": True,
                "allowForwardedTraffic": True,
                "allowGatewayTransit": hub.use_remote_gateways,
            }
            for region, network in networks.items()
        ]
    if shared_hub_zones(config):
        requests["dnsLinks"] = {zone: vnets for zone, vnets in dns.hub_links.items() if vnets}
        requests["apiServerZones"] = own_hub_zones(config)
    if monitoring_link is not None and config.operations.private_link_scope.scope_id:
        requests["monitorScopeMembers"] = dict(monitoring_link.members)
    return requests


def build_data(ctx: Context, foundation: FoundationOutputs) -> DataOutputs:
    config = ctx.config
    service = ctx.data_plane(
        foundation.subnet_ids,
        foundation.dns_zone_ids,
        foundation.regional_dns_zone_ids,
        {r: foundation.workspaces(r)[0] for r in endpoint_regions(config)},
    )
    storage = PrivateStorage(
        "storage",
        PrivateStorageArgs(
            service=service,
            settings=config.storage,
            account_names={key: storage_account_name(config, key) for key in config.storage.accounts},
            subscription_id=ctx.deployer.subscription_id,
            encryption_keys=foundation.storage_keys,
            replicas=replicas(config),
            alert_routes=alert_routes(config, foundation.action_group_ids),
        ),
        opts=ctx.opts,
    )
    namespace = None
    kafka = config.kafka
    if kafka is not None and kafka.engine == "eventhubs":
        backbone = EventHubsBackbone(
            "events",
            EventHubsBackboneArgs(
                service=service,
                kafka=kafka,
                settings=kafka.event_hubs or EventHubsConfig(),
                principal_ids={client: foundation.identity_principal_ids[client] for client in kafka.clients},
                subscription_id=ctx.deployer.subscription_id,
                alert_routes=alert_routes(config, foundation.action_group_ids),
            ),
            opts=ctx.opts,
        )
        namespace = backbone.namespace_name
    return DataOutputs(
        container_ids=storage.container_ids,
        event_hubs_namespace=namespace,
        replica_container_ids=storage.replica_container_ids,
    )


def build_cluster(ctx: Context, key: str, foundation: FoundationOutputs) -> ClusterOutputs:
    config, naming = ctx.config, ctx.naming
    cluster = config.clusters[key]
    region = cluster.region
    subnet_ids = foundation.subnet_ids[region]
    login_server = naming.registry_login_server()
    aks = AksCluster(
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
                vnet_id=foundation.vnet_ids[region],
                api_server_dns_zone_id=foundation.dns_zone_ids.get(cluster_api_server_zone(config, region)),
            ),
            admin_group_object_ids=list(config.entra.admin_group_object_ids),
            tenant_id=config.entra.tenant_id or ctx.deployer.tenant_id,
            subscription_id=ctx.deployer.subscription_id,
            kubelogin_mode=config.entra.kubelogin_mode,
            operations=config.operations,
            # The cluster's own region's workspaces: its metrics and logs keep flowing when
            # another region is down.
            monitoring=ClusterMonitoring(
                log_analytics_workspace_id=foundation.workspaces(region)[0],
                monitor_workspace_id=foundation.workspaces(region)[1],
                monitor_workspace_region=region,
                data_collection_endpoint_id=foundation.collection_endpoint(region),
                container_logs=config.operations.container_logs,
            ),
            protect=config.protect,
            upgrade_channel=config.upgrade_channel(key),
            node_os_channel=config.node_os_channel(key),
            registry_id=foundation.registry_id,
            fleet_managed=config.has_fleet,
            dedicated_pools={
                **(kafka_plan.kafka_node_pools(config) if key in config.kafka_clusters() else {}),
                **(streaming_plan.streaming_node_pools(config) if key in config.streaming_clusters() else {}),
            },
            egress_ips=foundation.egress_ips[region],
            network_ready=[
                link
                for (zone, vnet), link in foundation.dns_links.items()
                if cluster.api_server.private
                and zone == cluster_api_server_zone(config, region)
                and vnet == naming.regional("vnet", region)
            ],
            tags={**ctx.tags, "cluster": key},
        ),
        opts=ctx.opts,
    )
    provider = aks.kubernetes_provider
    # Also the DNS links: a node resolves the registry only once its VNet is linked.
    pull_ready = [*foundation.after, aks.kubelet_pull_grant]
    traffic = cluster_traffic(config, key)
    if config.operations.container_logs.enabled:
        ClusterLogSettings(
            f"logs-{key}",
            ClusterLogSettingsArgs(container_logs=config.operations.container_logs),
            provider=provider,
            opts=ctx.opts,
        )
    admission = ClusterAdmission(
        f"admission-{key}",
        ClusterAdmissionArgs(
            cluster_key=key,
            cluster_id=aks.cluster_id,
            login_server=login_server,
            settings=config.admission,
            privileged_namespaces=[ns for ns in traffic if ns in PRIVILEGED_NAMESPACES],
            training_namespaces=[ns for team in config.teams.values() for ns in team.training_namespaces],
        ),
        provider=provider,
        opts=ctx.opts,
    )
    kueue = None
    gpu_pools = capacity.plan_cluster(config, key).gpu_pools
    dispatcher = key in config.jobs.dispatchers
    if gpu_pools or dispatcher:
        gpu_stack = GpuStack(
            f"kueue-{key}" if dispatcher else f"gpu-{key}",
            GpuStackArgs(
                cluster=cluster,
                gpu_pools=gpu_pools,
                login_server=login_server,
                pull_ready=pull_ready,
                traffic=traffic,
                priority_class=PLATFORM_CRITICAL.name,
                ready=admission.ready,
                multikueue_origin=dispatch_plan.origin(key) if dispatcher else None,
            ),
            provider=provider,
            opts=ctx.opts,
        )
        kueue = gpu_stack.kueue
        if gpu_stack.gpu_operator is not None:
            GpuHealth(
                f"gpu-health-{key}",
                GpuHealthArgs(
                    cluster=cluster,
                    settings=config.operations.gpu_health,
                    login_server=login_server,
                    traffic=traffic[GPU_HEALTH_NAMESPACE],
                    ready=[gpu_stack.gpu_operator, *pull_ready],
                ),
                provider=provider,
                opts=ctx.opts,
            )
    ClusterAdmins(
        f"admins-{key}",
        ClusterAdminsArgs(
            environment=config.environment,
            cluster_key=key,
            cluster_id=aks.cluster_id,
            admin_group_object_ids=list(config.entra.admin_group_object_ids),
            subscription_id=ctx.deployer.subscription_id,
        ),
        opts=ctx.opts,
    )
    kafka = None
    if _hosts_strimzi(config, key):
        kafka = _strimzi(ctx, key, foundation, provider, pull_ready, traffic, admission)
    streaming: list[pulumi.Resource] = []
    if key in config.streaming_clusters():
        platform = StreamingPlatform(
            f"streaming-{key}",
            StreamingPlatformArgs(
                cluster_key=key,
                config=config,
                login_server=login_server,
                priority_class=PLATFORM_CRITICAL.name,
                traffic=traffic,
                pull_ready=pull_ready,
                ready=admission.ready,
            ),
            provider=provider,
            opts=ctx.opts,
        )
        streaming = [platform.operator, *platform.namespaces.values()]
    ClusterAlerts(
        f"alerts-{key}",
        ClusterAlertsArgs(
            cluster_key=key,
            cluster_name=aks.cluster_name,
            resource_group_name=aks.resource_group_name,
            monitor_workspace_id=foundation.workspaces(region)[1],
            region=region,
            groups=alerts_plan.rule_groups(config, key),
            routes=alert_routes(config, foundation.action_group_ids),
            tags={**ctx.tags, "cluster": key},
        ),
        opts=ctx.opts,
    )
    if key in config.dispatch_workers():
        assert config.jobs.worker_role_id is not None, "validation requires platform:jobs.workerRoleId"
        DispatchWorker(
            f"dispatch-worker-{key}",
            DispatchWorkerArgs(
                environment=config.environment,
                cluster_key=key,
                cluster_id=aks.cluster_id,
                subscription_id=ctx.deployer.subscription_id,
                principal_id=foundation.identity_principal_ids[dispatch_plan.DISPATCH_WORKLOAD],
                worker_role_id=str(config.jobs.worker_role_id),
                namespaces=dispatch_plan.worker_namespaces(dispatch_plan.worker_pools(config)[key], dict(config.teams)),
            ),
            provider=provider,
            opts=ctx.opts,
        )
    if key in config.jobs.dispatchers:
        DispatchRefresher(
            f"dispatch-refresher-{key}",
            DispatchRefresherArgs(
                workers=config.dispatch_workers(),
                client_id=foundation.identity_client_ids[dispatch_plan.DISPATCH_WORKLOAD],
                tenant_id=config.entra.tenant_id or ctx.deployer.tenant_id,
                login_server=login_server,
                priority_class=PLATFORM_CRITICAL.name,
                tolerations=[SYSTEM_POOL_TOLERATION],
                ready=[kueue] if kueue is not None else [],
            ),
            provider=provider,
            opts=ctx.opts,
        )
    return ClusterOutputs(
        cluster_id=aks.cluster_id,
        oidc_issuer_url=aks.oidc_issuer_url,
        kubeconfig=aks.kubeconfig,
        kafka_id=kafka.id if kafka is not None else None,
        provider=provider,
        kafka=kafka,
        kueue=kueue,
        streaming=streaming,
        name=aks.cluster_name,
        resource_group_name=aks.resource_group_name,
    )


def _hosts_strimzi(config: PlatformConfig, key: str) -> bool:
    return config.kafka is not None and config.kafka.engine == "strimzi" and key in config.kafka_clusters()


def _kafka_clients(config: PlatformConfig, key: str, principal_ids: Mapping[str, pulumi.Input[str]]):
    kafka = config.kafka
    assert kafka is not None
    return [
        KafkaClientSpec(client, config.workloads[client].namespace, spec.authentication, principal_ids[client])
        for client, spec in kafka.clients.items()
        # Where it runs and where it fails over to: a client that moves finds its user there.
        if key in config.identity_clusters(client)
    ]


def _mirror_identity(config: PlatformConfig, foundation: FoundationOutputs) -> MirrorIdentity | None:
    if not kafka_plan.mirror_clusters(config):
        return None
    workload = kafka_plan.MIRROR_WORKLOAD
    return MirrorIdentity(foundation.identity_client_ids[workload], foundation.identity_principal_ids[workload])


def _strimzi(
    ctx: Context,
    key: str,
    foundation: FoundationOutputs,
    provider: Any,
    pull_ready: list[pulumi.Resource],
    traffic: dict[str, NamespaceTraffic],
    admission: ClusterAdmission,
) -> pulumi.CustomResource:
    config = ctx.config
    kafka = config.kafka
    assert kafka is not None
    mirrors = kafka_plan.mirror_clusters(config)
    region = config.clusters[key].region
    strimzi = StrimziKafka(
        f"kafka-{key}",
        StrimziKafkaArgs(
            cluster_key=key,
            kafka=kafka,
            clients=_kafka_clients(config, key, foundation.identity_principal_ids),
            # Managed identities, and so their tokens, belong to the subscription's tenant.
            tenant_id=ctx.deployer.tenant_id,
            remote_clusters=[other for other in mirrors if other != key],
            mirror=_mirror_identity(config, foundation),
            replication=ReplicationEndpoint(
                bootstrap_address=kafka_plan.replication_bootstrap_address(config, key),
                subnet_name=ctx.naming.regional("snet", region, f"{key}-nodes"),
                peer_ranges=kafka_plan.mirror_peer_ranges(config, key),
            )
            if key in mirrors
            else None,
            login_server=ctx.naming.registry_login_server(),
            pull_ready=pull_ready,
            protect=config.protect,
            traffic=traffic[kafka_plan.KAFKA_NAMESPACE],
            ready=admission.ready,
            ca_readers=[str(plan.tenants_principal_object_id)]
            if (plan := config.entra.plan_identity) is not None and plan.tenants_principal_object_id is not None
            else [],
            ca_certificates=[kafka_plan.cluster_ca_secret(c) for c in config.kafka_clusters()],
        ),
        provider=provider,
        opts=ctx.opts,
    )
    return strimzi.kafka


def build_tenants(
    ctx: Context,
    foundation: FoundationOutputs,
    data: DataOutputs,
    clusters: Mapping[str, ClusterOutputs],
) -> dict[str, Any]:
    """The tenants' unit; returns each Kafka client's connection info."""
    config, naming = ctx.config, ctx.naming
    mirrors = kafka_plan.mirror_clusters(config)
    workloads = [
        WorkloadSpec(
            name=workload,
            namespace=spec.namespace,
            service_account=spec.service_account,
            issuers={c: clusters[c].oidc_issuer_url for c in config.identity_clusters(workload)},
            grants=workload_grants(config, workload, data, foundation.key_vault_ids),
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
                issuers={c: clusters[c].oidc_issuer_url for c in mirrors},
                grants=[],
            )
        )
    if config.jobs.dispatchers:
        # The dispatchers' refresher signs in as the environment's MultiKueue identity.
        workloads.append(
            WorkloadSpec(
                name=dispatch_plan.DISPATCH_WORKLOAD,
                namespace=KUEUE_NAMESPACE,
                service_account=dispatch_plan.TOKEN_JOB,
                issuers={c: clusters[c].oidc_issuer_url for c in config.jobs.dispatchers},
                grants=[],
            )
        )
    workload_access = WorkloadAccess(
        "workloads",
        WorkloadAccessArgs(
            naming=naming,
            workloads=workloads,
            identity_names=foundation.identity_names,
            principal_ids=foundation.identity_principal_ids,
            identity_resource_group=foundation.identity_resource_group,
            subscription_id=ctx.deployer.subscription_id,
        ),
        opts=ctx.opts,
    )
    tenant_id = config.entra.tenant_id or ctx.deployer.tenant_id
    namespaces: dict[str, dict[str, pulumi.Resource]] = {}
    tenancies: dict[str, pulumi.Resource] = {}
    for key in config.clusters:
        cluster = clusters[key]
        tenancy = ClusterTenancy(
            f"tenancy-{key}",
            ClusterTenancyArgs(
                environment=config.environment,
                cluster_key=key,
                cluster_id=cluster.cluster_id,
                teams=dict(config.teams),
                admin_group_object_ids=list(config.entra.admin_group_object_ids),
                service_accounts=[
                    ServiceAccountSpec(
                        workload,
                        spec.namespace,
                        spec.service_account,
                        foundation.identity_client_ids[workload],
                        kubernetes_api=spec.kubernetes_api,
                    )
                    for workload, spec in config.workloads.items()
                    if key in config.identity_clusters(workload)
                ],
                tenant_id=tenant_id,
                subscription_id=ctx.deployer.subscription_id,
                traffic=cluster_traffic(config, key),
                made_elsewhere=frozenset(streaming_plan.streaming_namespaces(config))
                if key in config.streaming_clusters()
                else frozenset(),
                namespaces_ready=list(cluster.streaming),
            ),
            provider=cluster.provider,
            opts=ctx.opts,
        )
        namespaces[key] = dict(tenancy.namespaces)
        tenancies[key] = tenancy
        gpu_pools = capacity.plan_cluster(config, key).gpu_pools
        if gpu_pools:
            TeamQueues(
                f"queues-{key}",
                TeamQueuesArgs(
                    cluster_key=key,
                    gpu_pools=gpu_pools,
                    teams=dict(config.teams),
                    kueue=cluster.kueue,
                    team_namespaces=namespaces[key],
                ),
                provider=cluster.provider,
                opts=ctx.opts,
            )
    if config.jobs.dispatchers:

        def access(key: str) -> ClusterAccess:
            ready = [r for r in (clusters[key].kueue, tenancies[key]) if r is not None]
            return ClusterAccess(clusters[key].provider, ready)

        workers = config.dispatch_workers()
        JobDispatch(
            "dispatch",
            JobDispatchArgs(
                dispatchers={key: access(key) for key in config.jobs.dispatchers},
                workers={key: access(key) for key in workers},
                worker_kubeconfigs={key: clusters[key].kubeconfig for key in workers},
                worker_pools=dispatch_plan.worker_pools(config),
                teams=dict(config.teams),
                team_namespaces=namespaces,
            ),
            opts=ctx.opts,
        )
    kafka_access: dict[str, pulumi.Resource] = {}
    connections = _kafka_tenants(ctx, foundation, data, clusters, namespaces, kafka_access)
    for key in config.streaming_clusters():
        StreamingJobs(
            f"flink-{key}",
            StreamingJobsArgs(
                cluster_key=key,
                config=config,
                login_server=naming.registry_login_server(),
                account_name=storage_account_name(config, streaming_plan.CHECKPOINT_ACCOUNT),
                client_ids=foundation.identity_client_ids,
                # Managed identities, and so their tokens, belong to the subscription's tenant.
                tenant_id=ctx.deployer.tenant_id,
                event_hubs_namespace=data.event_hubs_namespace,
                # Within one stack, also the operator (its CRD) and the namespaces; across unit
                # stacks, the cluster's unit deploys first and is destroyed last.
                ready=[
                    workload_access,
                    tenancies[key],
                    *([kafka_access[key]] if key in kafka_access else []),
                    *clusters[key].streaming,
                ],
            ),
            provider=clusters[key].provider,
            opts=ctx.opts,
        )
    return connections


def _kafka_tenants(
    ctx: Context,
    foundation: FoundationOutputs,
    data: DataOutputs,
    clusters: Mapping[str, ClusterOutputs],
    namespaces: Mapping[str, Mapping[str, pulumi.Resource]],
    accesses: dict[str, pulumi.Resource],
) -> dict[str, Any]:
    """Kafka topics, users and CA copies per hosting cluster (into `accesses`), MirrorMaker
    between them; each client's connection info."""
    config = ctx.config
    kafka = config.kafka
    if kafka is None:
        return {}
    if kafka.engine == "eventhubs":
        assert data.event_hubs_namespace is not None
        return {
            client: pulumi.Output.from_input(data.event_hubs_namespace).apply(
                partial(kafka_plan.connection_info, config, client)
            )
            for client in kafka.clients
        }
    mirrors = kafka_plan.mirror_clusters(config)
    mirror = _mirror_identity(config, foundation)
    for key in config.kafka_clusters():
        cluster = clusters[key]
        assert cluster.kafka_id is not None  # every hosting cluster exports its Kafka
        accesses[key] = KafkaAccess(
            f"kafka-access-{key}",
            KafkaAccessArgs(
                cluster_key=key,
                kafka=kafka,
                clients=_kafka_clients(config, key, foundation.identity_principal_ids),
                remote_clusters=[other for other in mirrors if other != key],
                mirror=mirror,
                kafka_id=cluster.kafka_id,
                protect=config.protect,
                kafka_resource=cluster.kafka,
                team_namespaces=dict(namespaces[key]),
            ),
            provider=cluster.provider,
            opts=ctx.opts,
        )
    for key in mirrors:
        assert mirror is not None  # made whenever there are mirrors
        KafkaMirror(
            f"kafka-mirror-{key}",
            KafkaMirrorArgs(
                cluster_key=key,
                kafka=kafka,
                sources=[
                    MirrorSource(
                        other,
                        kafka_plan.replication_bootstrap_address(config, other),
                        clusters[other].provider,
                        kafka_id=clusters[other].kafka_id or "",
                        kafka=clusters[other].kafka,
                    )
                    for other in mirrors
                    if other != key
                ],
                identity=mirror,
                # Managed identities, and so their tokens, belong to the subscription's tenant.
                tenant_id=ctx.deployer.tenant_id,
                local_kafka=clusters[key].kafka,
            ),
            provider=clusters[key].provider,
            opts=ctx.opts,
        )
    return {client: kafka_plan.connection_info(config, client) for client in kafka.clients}


def build_fleet(ctx: Context, clusters: Mapping[str, ClusterOutputs]) -> KubernetesFleet:
    return KubernetesFleet(
        "fleet",
        FleetArgs(
            naming=ctx.naming,
            region=ctx.config.primary_region,
            settings=ctx.config.fleet_settings,
            members=[FleetMemberSpec(key, c.cluster_id) for key, c in clusters.items()],
            tags=ctx.tags,
        ),
        opts=ctx.opts,
    )


@dataclass(frozen=True)
class PlatformArgs:
    config: PlatformConfig


class Platform(pulumi.ComponentResource):
    """Every unit of the environment in one stack, wired in process (see the module's doc)."""

    def __init__(self, name: str, args: PlatformArgs, opts: pulumi.ResourceOptions | None = None):
        super().__init__("platform:index:Platform", name, None, opts)
        ctx = Context(args.config, parent=self)
        self.foundation = build_foundation(ctx)
        data = build_data(ctx, self.foundation)
        self.clusters = {key: build_cluster(ctx, key, self.foundation) for key in args.config.clusters}
        if args.config.has_fleet:
            build_fleet(ctx, self.clusters)
        self.kafka_connections = build_tenants(ctx, self.foundation, data, self.clusters)
        self.register_outputs(
            {
                "clusters": {key: c.name for key, c in self.clusters.items()},
                "registryLoginServer": ctx.naming.registry_login_server(),
                "workloadClientIds": self.foundation.identity_client_ids,
            }
        )


def _networks(
    ctx: Context,
    workspace_ids: Mapping[str, pulumi.Input[str]],
    routes: Mapping[str, list[pulumi.Input[str]]],
) -> dict[str, RegionalNetwork]:
    config, naming = ctx.config, ctx.naming
    egress, hub = config.network.egress, config.network.hub
    hub_provider = None
    if hub and hub.create_hub_side_peering:
        # Named `hub-subscription` before it also served the hub's DNS zones.
        hub_provider = ctx.subscription_provider(
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
                firewall=firewall_spec(
                    config, region, workspace_ids.get(region, workspace_ids[config.primary_region]), routes
                ),
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
                tags=ctx.tags,
            ),
            opts=ctx.opts,
        )
        previous_hub_peering = regional.hub_side_peering or previous_hub_peering
        networks[region] = regional
    # Regions of one environment reach each other directly (e.g. Kafka mirroring).
    for first, second in combinations(networks.values(), 2):
        peer_regions(first, second, parent=ctx.parent)
    return networks


def _private_dns(ctx: Context, networks: Mapping[str, RegionalNetwork]) -> tuple[PrivateDns, dict[str, PrivateDns]]:
    """The shared zones (every API server zone, linked to every VNet and the hub; the data-plane
    zones, linked to the primary region's VNet, the hub, and regions without clusters), and a
    set of data-plane zones of its own for every other region with clusters, where its
    endpoints register (docs/decisions/0008-regional-failure.md)."""
    config, naming = ctx.config, ctx.naming
    hub = config.network.hub
    vnet_ids: dict[str, pulumi.Input[str]] = {
        naming.regional("vnet", region): network.vnet_id for region, network in networks.items()
    }
    central = None
    if hub and hub.private_dns_zones_resource_group_id:
        zones_group = hub.private_dns_zones_resource_group_id
        central = CentralZones(zones_group, ctx.subscription_provider(zones_group.split("/")[2]), own_hub_zones(config))
    elif hub:
        # Our zones: deploy runners and resolvers in the hub must resolve them too.
        vnet_ids[parse_resource_id(hub.virtual_network_id).name] = hub.virtual_network_id
    # The environment's own Azure Monitor zones stay off the hub's VNet: linked there, they would
    # send the hub's own Azure Monitor traffic to this environment's scope.
    hub_vnet = parse_resource_id(hub.virtual_network_id).name if hub else None
    monitor_only = {z for z in zones_of("azuremonitor") if z not in ZONE_BY_GROUP_ID.values()}
    own_zones = [r for r in endpoint_regions(config) if r != config.primary_region]
    elsewhere = {naming.regional("vnet", r) for r in own_zones}
    shared = PrivateDns(
        "dns",
        PrivateDnsArgs(
            naming=naming,
            region=config.primary_region,
            zones=private_dns_zones(config),
            vnet_ids=vnet_ids,
            central=central,
            tags=ctx.tags,
            vnets_by_zone={
                zone: [v for v in vnet_ids if v not in elsewhere and not (zone in monitor_only and v == hub_vnet)]
                for zone in data_plane_zones(config)
            },
        ),
        opts=ctx.opts,
    )
    regional = {
        region: PrivateDns(
            f"dns-{region_code(region)}",
            PrivateDnsArgs(
                naming=naming,
                region=region,
                zones=data_plane_zones(config),
                vnet_ids={naming.regional("vnet", region): networks[region].vnet_id},
                tags=ctx.tags,
            ),
            opts=ctx.opts,
        )
        for region in own_zones
    }
    return shared, regional


def _foundation_reference(config: PlatformConfig, regions: Sequence[str]) -> FoundationOutputs:
    """The foundation's outputs, with the networks of `regions` only (those the unit builds in)."""
    keys = subnet_keys(config)
    return FoundationOutputs.read(
        subnets={region: keys[region] for region in regions},
        zones=private_dns_zones(config),
        regional_zones={r: data_plane_zones(config) for r in endpoint_regions(config) if r != config.primary_region},
        workloads=identity_workloads(config),
        storage_key=config.storage.customer_managed_key,
        vault_regions=endpoint_regions(config),
        receivers=list(config.operations.alerts.receivers),
        grafana=config.operations.grafana.enabled,
    )


def _cluster_reference(config: PlatformConfig, key: str) -> ClusterOutputs:
    outputs = ClusterOutputs.read(key, kafka=_hosts_strimzi(config, key))
    # Named as the cluster unit's own provider (and as the single stack's), so resources moved
    # here with `pulumi state move` keep theirs (docs/migration.md).
    provider = kubernetes.Provider(
        f"aks-{key}-k8s",
        kubeconfig=outputs.kubeconfig,
        cluster_identifier=Naming(config.prefix, config.environment).cluster(key),
        enable_server_side_apply=True,
        helm_release_settings=kubernetes.HelmReleaseSettingsArgs(driver=HELM_DRIVER),
    )
    return dataclasses.replace(outputs, provider=provider)


def deploy(config: PlatformConfig, unit: Unit | None) -> None:
    """Build one deployment unit of the environment (None: all of them in one stack) and export
    its contract and what people use (kubeconfigs, Kafka connection info, workload context)."""
    if unit is None:
        _deploy_single_stack(config)
        return
    ctx = Context(config)
    if unit.layer == "foundation":
        foundation = build_foundation(ctx)
        for name, value in foundation.to_exports().items():
            pulumi.export(name, value)
        pulumi.export("registryLoginServer", ctx.naming.registry_login_server())
        # Client IDs of the workload identities, for pods outside the platform's service accounts.
        pulumi.export("workloadIdentities", foundation.identity_client_ids)
    elif unit.layer == "data":
        data = build_data(ctx, _foundation_reference(config, endpoint_regions(config)))
        for name, value in data.to_exports().items():
            pulumi.export(name, value)
    elif unit.layer == "cluster":
        region = config.clusters[unit.cluster].region
        cluster = build_cluster(ctx, unit.cluster, _foundation_reference(config, [region]))
        for name, value in cluster.to_exports().items():
            pulumi.export(name, value)
        pulumi.export(
            "cluster",
            {
                "name": cluster.name,
                "resourceGroup": cluster.resource_group_name,
                "oidcIssuerUrl": cluster.oidc_issuer_url,
            },
        )
    elif unit.layer == "tenants":
        data_outputs = DataOutputs.read(
            containers={key: list(account.containers) for key, account in config.storage.accounts.items()},
            event_hubs=config.kafka is not None and config.kafka.engine == "eventhubs",
            replicated=list(replicas(config)),
        )
        clusters = {key: _cluster_reference(config, key) for key in config.clusters}
        foundation = _foundation_reference(config, [])
        connections = build_tenants(ctx, foundation, data_outputs, clusters)
        # Per Kafka client: bootstrap servers per cluster, security protocol, SASL mechanism,
        # token scope, topics. No secret: clients sign in with their workload identity.
        pulumi.export("kafkaClients", connections)
        # Where the deploy job provisions dashboards/ after `up` (scripts/dashboards.py).
        pulumi.export("grafanaEndpoint", foundation.grafana_endpoint)
        # What the golden workloads (examples/) are filled in with (scripts/workloads.py reads
        # this stack's outputs alone).
        pulumi.export("workloadContext", workload_context(config))
        pulumi.export("registryLoginServer", ctx.naming.registry_login_server())
    else:
        clusters = {key: ClusterOutputs.read(key, kafka=False) for key in config.clusters}
        fleet = build_fleet(ctx, clusters)
        pulumi.export("fleetId", fleet.fleet_id)


def _deploy_single_stack(config: PlatformConfig) -> None:
    platform = Platform(f"platform-{config.environment}", PlatformArgs(config))
    pulumi.export(
        "clusters",
        {
            key: {"name": c.name, "resourceGroup": c.resource_group_name, "oidcIssuerUrl": c.oidc_issuer_url}
            for key, c in platform.clusters.items()
        },
    )
    pulumi.export("workloadIdentities", platform.foundation.identity_client_ids)
    pulumi.export("registryLoginServer", Naming(config.prefix, config.environment).registry_login_server())
    pulumi.export("kafkaClients", platform.kafka_connections)
    pulumi.export("workloadContext", workload_context(config))
    # Kubeconfigs log in through kubelogin (Entra ID); they hold no credentials, but stay secret.
    pulumi.export("kubeconfigs", {key: c.kubeconfig for key, c in platform.clusters.items()})
    if platform.foundation.hub_requests is not None:
        pulumi.export("hubRequests", platform.foundation.hub_requests)
