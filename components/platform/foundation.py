"""The foundation unit: networks per region and their peerings, private DNS, monitoring, Key Vault,
the registry, the workloads' identities, and what the hub's owner makes for it.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from itertools import combinations
from typing import Any

import pulumi

from components.alerting import ActionGroups, ActionGroupsArgs
from components.grafana import ManagedGrafana, ManagedGrafanaArgs
from components.keyvault import KeyVault, KeyVaultArgs
from components.monitoring_private_link import MonitoringPrivateLink, MonitoringPrivateLinkArgs
from components.network import (
    HubPeeringSpec,
    RegionalNetwork,
    RegionalNetworkArgs,
    peer_regions,
)
from components.observability import Observability, ObservabilityArgs
from components.outputs import FoundationOutputs
from components.platform.context import (
    Context,
    alert_routes,
    cache_rules,
    data_plane_zones,
    endpoint_regions,
    firewall_spec,
    identity_workloads,
    own_hub_zones,
    private_dns_zones,
    region_subnets,
    shared_hub_zones,
    vault_key,
)
from components.private_dns import (
    CentralZones,
    PrivateDns,
    PrivateDnsArgs,
)
from components.rbac import assign_role
from components.registry import ContainerRegistry, ContainerRegistryArgs
from components.serving import ServingZone, ServingZoneArgs
from components.workload_identity import (
    WorkloadIdentities,
    WorkloadIdentitiesArgs,
)
from facts import keda
from planning import onprem as onprem_plan
from planning import serving as serving_plan
from planning import serving_scaling as scaling_plan
from planning.naming import (
    parse_resource_id,
    region_code,
)
from planning.private_link import ZONE_BY_GROUP_ID, zones_of


def build_foundation(ctx: Context) -> FoundationOutputs:
    config, naming = ctx.config, ctx.naming
    region = config.primary_region
    # Workspaces per region with clusters: each region's clusters, firewall and data plane keep
    # their logs and metrics flowing while another region is down (decision 0008).
    observability = {
        r: Observability(
            "ops" if r == region else f"ops-{region_code(r)}",
            ObservabilityArgs(
                create_groups=ctx.create_groups,
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
    query_endpoints = {r: o.prometheus_query_endpoint for r, o in observability.items()}
    networks = _networks(ctx, workspace_ids, routes, query_endpoints)
    dns, regional_dns = _private_dns(ctx, networks)
    _serving_zones(ctx, networks)
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
        WorkloadIdentitiesArgs(
            naming=naming,
            region=region,
            workloads=identity_workloads(config),
            tags=ctx.tags,
            create_groups=ctx.create_groups,
            protect=config.protect,
        ),
        opts=ctx.opts,
    )
    if scaling_plan.keda_clusters(config):
        # KEDA's operator reads each scaling region's metrics and nothing else (planning/
        # serving_scaling.py): the workspaces and the identity are both this unit's.
        scaler = scaling_plan.SCALER_WORKLOAD
        for r in scaling_plan.keda_regions(config):
            assign_role(
                f"{scaler}-reads-metrics-{r}",
                role=keda.PROMETHEUS_READER_ROLE,
                scope=observability[r].monitor_workspace_id,
                scope_key=f"{naming.environment}/amw/{r}",
                principal_id=identities.principal_ids[scaler],
                principal_key=f"{naming.environment}/{scaler}",
                subscription_id=ctx.deployer.subscription_id,
                parent=identities,
            )
    return FoundationOutputs(
        log_analytics_workspace_id=observability[region].log_analytics_workspace_id,
        monitor_workspace_id=observability[region].monitor_workspace_id,
        action_group_ids=action_groups.ids,
        data_collection_endpoint_id=observability[region].data_collection_endpoint_id,
        prometheus_query_endpoints=query_endpoints,
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
    and its members of the hub's Azure Monitor scope; with on-premises sites, the gateway's routes
    to the environment's firewalls (docs/deploying.md, "The hub")."""
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
    routes = [
        {
            "name": f"{naming.environment}-{region}-{str(prefix).replace('/', '-')}",
            "addressPrefix": prefix,
            "nextHopType": "VirtualAppliance",
            "nextHopIpAddress": network.firewall.private_ip,
        }
        for region, network in networks.items()
        if network.firewall is not None
        for prefix in onprem_plan.firewall_routed_subnets(config, region)
    ]
    if routes:
        # On the hub's GatewaySubnet: on-premises sites reach the clusters' subnets through their
        # region's firewall (planning/onprem.py, firewall_routed_subnets).
        requests["gatewayRoutes"] = routes
    return requests


def _networks(
    ctx: Context,
    workspace_ids: Mapping[str, pulumi.Input[str]],
    routes: Mapping[str, list[pulumi.Input[str]]],
    query_endpoints: Mapping[str, pulumi.Input[str]],
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
                create_groups=ctx.create_groups,
                naming=naming,
                region=region,
                address_space=list(vnet.address_space),
                subnets=region_subnets(config, region),
                outbound_type=egress.outbound_type,
                firewall=firewall_spec(
                    config,
                    region,
                    workspace_ids.get(region, workspace_ids[config.primary_region]),
                    routes,
                    query_endpoints.get(region),
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


def _serving_zones(ctx: Context, networks: Mapping[str, RegionalNetwork]) -> None:
    """The serving zone, a copy per serving region in its network group, linked to its VNet (the
    primary's also to the hub's, where the environment's zones are its own), resolving each serving
    team's names to the region's gateway (planning/serving.py)."""
    config, naming = ctx.config, ctx.naming
    if config.serving is None:
        return
    hub = config.network.hub
    for region, network in networks.items():
        records = serving_plan.zone_records(config, region)
        if not records:
            continue
        vnet_ids: dict[str, pulumi.Input[str]] = {naming.regional("vnet", region): network.vnet_id}
        if hub and region == config.primary_region and not shared_hub_zones(config):
            vnet_ids[parse_resource_id(hub.virtual_network_id).name] = hub.virtual_network_id
        ServingZone(
            f"serving-zone-{region_code(region)}",
            ServingZoneArgs(
                zone=config.serving.zone,
                region=region,
                resource_group_name=network.resource_group_name,
                vnet_ids=vnet_ids,
                records=records,
                tags=ctx.tags,
            ),
            opts=ctx.opts,
        )


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
            create_groups=ctx.create_groups,
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
                create_groups=ctx.create_groups,
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
