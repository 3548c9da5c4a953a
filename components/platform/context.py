"""What every deployment unit is built from (`Context`: the validated config, names, tags, the
deployer) and the pure choices the units share: subnets, zones, grants, identities.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from urllib.parse import urlparse

import pulumi
import pulumi_azure_native
from pulumi_azure_native import authorization

from components.network import (
    FirewallSpec,
    SubnetSpec,
)
from components.outputs import DataOutputs
from components.private_dns import (
    DataPlaneSettings,
    PrivateEndpoints,
    RegionalEndpoints,
)
from components.workload_identity import (
    Grant,
)
from facts.cosmosdb import PRIVATE_ENDPOINT_GROUP
from facts.postgresql import PRIVATE_ENDPOINT_GROUP as POSTGRES_ENDPOINT_GROUP
from planning import dispatch as dispatch_plan
from planning import egress as egress_plan
from planning import kafka as kafka_plan
from planning import lustre_csi
from planning import onprem as onprem_plan
from planning import serving as serving_plan
from planning import serving_scaling as scaling_plan
from planning.cluster_traffic import (
    GPU_HEALTH_NAMESPACE,
    GPU_OPERATOR_NAMESPACE,
    NETWORK_OPERATOR_NAMESPACE,
)
from planning.images import PLATFORM_CACHE_RULES, CacheRule
from planning.naming import (
    Naming,
    region_code,
    regional_container,
    replica_account_name,
    replica_region,
)
from planning.private_link import ZONE_BY_GROUP_ID, api_server_zone, zones_of
from stackconfig.model import PlatformConfig
from validation.checks import ConfigProblem
from validation.loader import ConfigError

STORAGE_ROLES = {"read": "Storage Blob Data Reader", "write": "Storage Blob Data Contributor"}


API_SERVER_DELEGATION = "Microsoft.ContainerService/managedClusters"


PRIVATE_ENDPOINT_SUBNET = "private-endpoints"
LUSTRE_SUBNET = "lustre"


FIREWALL_SUBNET = "firewall"


# Namespaces whose node agents need host access (Pod Security `privileged`).
PRIVILEGED_NAMESPACES = (
    GPU_OPERATOR_NAMESPACE,
    NETWORK_OPERATOR_NAMESPACE,
    GPU_HEALTH_NAMESPACE,
    lustre_csi.NAMESPACE,
)


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
    query_endpoint: pulumi.Input[str] | None = None,
) -> FirewallSpec | None:
    """The region's firewall with userDefinedRouting: its rules, sources and zones."""
    egress = config.network.egress
    if egress.outbound_type != "userDefinedRouting":
        return None
    clusters = [cluster for cluster in config.clusters.values() if cluster.region == region]
    lustre = config.network.regions[region].subnets.lustre
    lustre_subnet = (
        str(lustre) if lustre is not None and config.lustre and region in config.lustre.file_systems else None
    )
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
            # Ubuntu's archives: NVIDIA's driver builds, and the Lustre CSI node plugin's `apt-get
            # update` before it installs the client (pkg/azurelustreplugin/entrypoint.sh).
            driver_builds=any(egress_plan.builds_drivers(cluster) for cluster in clusters)
            or any(config.clusters[key].region == region for key in lustre_csi.lustre_clusters(config)),
            lustre_subnet=lustre_subnet,
            defender=config.operations.defender,
        ),
        network_rules=[
            *(egress_plan.lustre_rules(lustre_subnet)[1] if lustre_subnet else []),
            *onprem_plan.site_api_rules(config, region),
            *onprem_plan.site_kafka_rules(config, region),
        ],
        private_ranges=onprem_plan.firewall_private_ranges(config),
        source_ranges=sources,
        zones=sorted({zone for cluster in clusters for zone in cluster.zones}) or ["1", "2", "3"],
        log_analytics_workspace_id=log_analytics_workspace_id,
        alert_routes=routes or {},
        query_hosts=[pulumi.Output.from_input(query_endpoint).apply(lambda url: urlparse(url).hostname or "")]
        if query_endpoint is not None and region in scaling_plan.keda_regions(config)
        else [],
    )


def region_subnets(config: PlatformConfig, region: str) -> list[SubnetSpec]:
    """The subnets of one region's VNet, in creation order, keyed `<cluster>-<role>`."""
    vnet = config.network.regions[region]
    specs = []
    if config.network.egress.outbound_type == "userDefinedRouting" and vnet.subnets.firewall is not None:
        specs.append(SubnetSpec(FIREWALL_SUBNET, "firewall", vnet.subnets.firewall, firewall=True))
    specs.append(
        SubnetSpec(
            PRIVATE_ENDPOINT_SUBNET,
            "privateEndpoints",
            vnet.subnets.private_endpoints,
            inbound=onprem_plan.on_premises_inbound(config, "privateEndpoints"),
        )
    )
    if vnet.subnets.lustre is not None:
        # Managed Lustre's own subnet: its outbound (Azure services, NTP) leaves like the nodes';
        # inbound, only the region's node subnets on Lustre's ports.
        clients = [
            str(cluster.subnets.nodes)
            for cluster in config.clusters.values()
            if cluster.region == region and cluster.gpu_pools
        ]
        specs.append(
            SubnetSpec(
                LUSTRE_SUBNET,
                "lustre",
                vnet.subnets.lustre,
                egress=True,
                inbound=egress_plan.lustre_inbound(str(vnet.subnets.lustre), clients),
            )
        )
    for key, cluster in config.clusters.items():
        if cluster.region != region:
            continue
        subnets = cluster.subnets
        closed = onprem_plan.on_premises_inbound(config, "cluster")
        specs.append(SubnetSpec(f"{key}-system", "system", subnets.system, egress=True, inbound=closed))
        # The node subnet holds the load balancers of its Kafka's listener for other networks.
        nodes_inbound = onprem_plan.on_premises_inbound(config, "cluster", kafka_host=key)
        specs.append(
            SubnetSpec(
                f"{key}-nodes",
                "nodes",
                subnets.nodes,
                egress=True,
                inbound=nodes_inbound,
                private_link_service=serving_plan.private_link_subnet(config, key),
            )
        )
        if subnets.pods is not None:
            specs.append(SubnetSpec(f"{key}-pods", "pods", subnets.pods, egress=True, inbound=closed))
        if subnets.api_server is not None:
            specs.append(
                SubnetSpec(
                    f"{key}-apiserver",
                    "apiServer",
                    subnets.api_server,
                    delegation=API_SERVER_DELEGATION,
                    inbound=closed,
                )
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
    without shared zones). It links its VNets there; the delivery grants that (planning/delivery.py)."""
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
    if config.cosmos_db is not None:
        group_ids.append(PRIVATE_ENDPOINT_GROUP)
    if config.postgresql is not None:
        group_ids.append(POSTGRES_ENDPOINT_GROUP)
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
    # A container written in every region: its writers write, and its readers read, the replica's
    # twin in its region.
    grants += [
        Grant(STORAGE_ROLES[access], data.replica_container_ids[account][twin], f"storage/{account}-replica/{twin}")
        for account, containers in spec.storage.items()
        if account in data.replica_container_ids
        for container, access in containers.items()
        if container in config.storage.accounts[account].written_in_every_region
        for twin in [regional_container(container, str(replica_region(config, account)))]
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
    """Workloads with a managed identity: the configured ones, MirrorMaker where it runs,
    MultiKueue's dispatchers where there are any, the serving gateways' certificate sync, and
    KEDA's operator where it scales served Deployments."""
    return (
        list(config.workloads)
        + ([kafka_plan.MIRROR_WORKLOAD] if kafka_plan.mirror_clusters(config) else [])
        + ([dispatch_plan.DISPATCH_WORKLOAD] if config.jobs.dispatchers else [])
        + ([serving_plan.CERTIFICATE_WORKLOAD] if config.serving is not None else [])
        + ([scaling_plan.SCALER_WORKLOAD] if scaling_plan.keda_clusters(config) else [])
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
    create_groups: bool = field(init=False)
    # Providers for other subscriptions (the hub's), made once however many parts need one.
    providers: dict[str, pulumi_azure_native.Provider] = field(init=False, default_factory=dict)

    def __post_init__(self) -> None:
        config = self.config
        self.naming = Naming(config.prefix, config.environment)
        # The units create their resource groups themselves only with platform:resourceGroups: program.
        self.create_groups = config.resource_groups == "program"
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
            create_groups=self.create_groups,
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


def check_subscription(config: PlatformConfig) -> None:
    """Stop before anything is registered when the Azure provider signs in to another subscription
    than the environment's: without `azure-native:subscriptionId` in the stack's file the provider
    takes the Azure CLI's current one (`az account set`), so a manual `pulumi up` would otherwise
    deploy wherever the CLI points (pulumi-azure-native's configuration: `subscriptionId`, or
    ARM_SUBSCRIPTION_ID, else the CLI's default subscription). A synchronous invoke: the program
    waits for it before its first resource."""
    signed_in = authorization.get_client_config().subscription_id
    if signed_in.lower() != config.subscription_id.lower():
        raise ConfigError(
            [
                ConfigProblem(
                    "platform:subscriptionId",
                    f"{config.environment} deploys to {config.subscription_id}, but the Azure provider signs in "
                    f"to {signed_in}: pin the stack with `pulumi config set azure-native:subscriptionId "
                    f"{config.subscription_id}` (docs/deploying.md), or `az account set` to it",
                )
            ]
        )
