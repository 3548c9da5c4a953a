"""The environment's Private DNS zones, linked to every VNet that must resolve them, and
the one way this program creates a private endpoint (with its DNS zone group).

Zones: one per Private Link service the environment uses (blob, dfs, vault, registry,
servicebus) and `privatelink.<region>.azmk8s.io` per region with private API servers. Each
zone is linked to every VNet of the environment and to the hub, where deploy runners and
on-premises resolvers sit. Links only resolve; endpoints write their own A records through
their zone group, AKS writes the API server's record itself.

In a hub's shared zones, which serve several environments, the hub's owner makes every zone
and every link (an environment that could link or unlink a shared zone could cut another
environment's resolution off): the environment only joins them (its endpoints' records) and
links its own VNets to its own API server subzones (`<prefix>-<env>.privatelink.<region>.azmk8s.io`),
on which alone it holds rights. What it needs of the hub is its stack output `hubRequests`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import pulumi
from pulumi_azure_native import network, privatedns

from components.groups import resource_group
from planning.naming import Naming
from planning.private_link import zone_config_name, zones_of


@dataclass(frozen=True)
class CentralZones:
    """Zones the hub owns (one per name for every environment), which this one links to."""

    resource_group_id: str
    # Provider for the zones' subscription, which may not be the deployment's.
    provider: pulumi.ProviderResource | None = None
    # The zones there that serve this environment alone (its API server subzones): it links its
    # own VNets to them. The hub's owner links the others.
    own: Sequence[str] = ()


@dataclass(frozen=True)
class PrivateDnsArgs:
    naming: Naming
    # Region of the zones' resource group (zones themselves are global).
    region: str
    zones: list[str]
    # VNet name -> VNet ID: the environment's VNets, and the hub's when the zones are ours.
    vnet_ids: Mapping[str, pulumi.Input[str]]
    central: CentralZones | None = None
    tags: dict[str, str] = field(default_factory=dict)
    # Zone name -> the VNet names (of `vnet_ids`) it links to; a zone not named links to all.
    # A VNet links one zone of a name: a region with its own zone set links those, not these.
    vnets_by_zone: Mapping[str, Sequence[str]] = field(default_factory=dict)
    # The unit creates its resource groups (platform:resourceGroups: program), or uses the delivery's.
    create_groups: bool = False


def link_vnet(
    name: str,
    zone: pulumi.Input[str],
    resource_group_name: pulumi.Input[str],
    vnet_name: str,
    vnet_id: pulumi.Input[str],
    tags: Mapping[str, str],
    opts: pulumi.ResourceOptions,
) -> privatedns.VirtualNetworkLink:
    """A zone's link to a VNet, for resolution only."""
    return privatedns.VirtualNetworkLink(
        name,
        # Named after the VNet: unique in a zone that several environments share.
        virtual_network_link_name=f"link-{vnet_name}",
        private_zone_name=zone,
        resource_group_name=resource_group_name,
        location="global",
        virtual_network=privatedns.SubResourceArgs(id=vnet_id),
        # Resolution only: endpoints and AKS write their records themselves.
        registration_enabled=False,
        # Private names resolve privately or not at all, never to a public address.
        resolution_policy=privatedns.ResolutionPolicy.DEFAULT,
        tags=dict(tags),
        opts=opts,
    )


class PrivateDns(pulumi.ComponentResource):
    """Outputs: `zone_ids[zone name]`, `links[(zone name, VNet name)]`, and `hub_links[zone
    name]`: the VNets the hub's owner links to a shared zone of the hub's."""

    zone_ids: dict[str, pulumi.Input[str]]
    # (zone name, VNet name) -> its link.
    links: dict[tuple[str, str], pulumi.Resource]
    hub_links: dict[str, list[pulumi.Input[str]]]

    def __init__(self, name: str, args: PrivateDnsArgs, opts: pulumi.ResourceOptions | None = None):
        super().__init__("platform:network:PrivateDns", name, None, opts)
        self.zone_ids = {}
        self.links = {}
        self.hub_links = {}
        if args.central:
            group_name: pulumi.Input[str] = args.central.resource_group_id.rstrip("/").rsplit("/", 1)[-1]
            link_opts = pulumi.ResourceOptions(parent=self, provider=args.central.provider)
        else:
            group = resource_group(
                name,
                args.naming.regional("rg", args.region, "dns"),
                args.region,
                args.tags,
                parent=self,
                create=args.create_groups,
            )
            group_name = group.name
            link_opts = pulumi.ResourceOptions(parent=self)
        for zone_name in args.zones:
            if args.central:
                zone_id: pulumi.Input[str] = (
                    f"{args.central.resource_group_id}/providers/Microsoft.Network/privateDnsZones/{zone_name}"
                )
                zone_ref: pulumi.Input[str] = zone_name
            else:
                zone = privatedns.PrivateZone(
                    f"{name}-{zone_name}",
                    private_zone_name=zone_name,
                    resource_group_name=group_name,
                    location="global",
                    tags=args.tags,
                    opts=pulumi.ResourceOptions(parent=self),
                )
                zone_id, zone_ref = zone.id, zone.name
            linked = args.vnets_by_zone.get(zone_name, list(args.vnet_ids))
            if args.central and zone_name not in args.central.own:
                self.hub_links[zone_name] = [vnet_id for vnet, vnet_id in args.vnet_ids.items() if vnet in linked]
                linked = []
            for vnet_name, vnet_id in args.vnet_ids.items():
                if vnet_name not in linked:
                    continue
                self.links[(zone_name, vnet_name)] = link_vnet(
                    f"{name}-{zone_name}-{vnet_name}", zone_ref, group_name, vnet_name, vnet_id, args.tags, link_opts
                )
            self.zone_ids[zone_name] = zone_id
        self.register_outputs({"zoneIds": self.zone_ids})


@dataclass(frozen=True)
class PrivateEndpoints:
    """Where a component's private endpoints go: a region's private-endpoint subnet, and the
    zones their records belong in."""

    region: str
    subnet_id: pulumi.Input[str]
    zone_ids: Mapping[str, pulumi.Input[str]]
    # Appended to the endpoints' names outside the primary region (the primary's keep theirs).
    suffix: str = ""

    def connect(
        self,
        name: str,
        *,
        target_id: pulumi.Input[str],
        target_name: str,
        group_id: str,
        resource_group_name: pulumi.Input[str],
        tags: dict[str, str],
        parent: pulumi.Resource,
        depends_on: list[pulumi.Resource] | None = None,
    ) -> list[pulumi.Resource]:
        """A private endpoint to one sub-resource of `target_id`, registered in its zone.

        Returns the endpoint and its zone group: clients can use the endpoint once both exist.
        """
        suffix = self.suffix
        endpoint = network.PrivateEndpoint(
            f"{name}-pe-{group_id}{suffix}",
            private_endpoint_name=f"pe-{target_name}-{group_id}{suffix}",
            # A readable NIC name instead of the generated `<pe>.nic.<guid>`.
            custom_network_interface_name=f"nic-pe-{target_name}-{group_id}{suffix}",
            resource_group_name=resource_group_name,
            location=self.region,
            subnet=network.SubnetArgs(id=self.subnet_id),
            private_link_service_connections=[
                network.PrivateLinkServiceConnectionArgs(
                    name=f"{target_name}-{group_id}",
                    private_link_service_id=target_id,
                    group_ids=[group_id],
                )
            ],
            tags=tags,
            opts=pulumi.ResourceOptions(parent=parent, depends_on=depends_on),
        )
        zone_group = network.PrivateDnsZoneGroup(
            f"{name}-pe-{group_id}{suffix}-dns",
            private_dns_zone_group_name="default",
            private_endpoint_name=endpoint.name,
            resource_group_name=resource_group_name,
            private_dns_zone_configs=[
                network.PrivateDnsZoneConfigArgs(name=zone_config_name(zone), private_dns_zone_id=self.zone_ids[zone])
                for zone in zones_of(group_id)
            ],
            opts=pulumi.ResourceOptions(parent=parent),
        )
        return [endpoint, zone_group]


@dataclass(frozen=True)
class RegionalEndpoints:
    """A private endpoint per region with clusters, each registered in its region's zones: a
    region reaches the data plane through its own endpoints (docs/decisions/0008)."""

    regions: Sequence[PrivateEndpoints]

    def connect(self, name: str, **kwargs: Any) -> list[pulumi.Resource]:
        """One endpoint per region, one after the other: Key Vault and storage refuse concurrent
        operations on one resource (ConflictError, StorageAccountOperationInProgress)."""
        created: list[pulumi.Resource] = []
        after = list(kwargs.pop("depends_on", None) or [])
        for endpoints in self.regions:
            made = endpoints.connect(name, depends_on=after + created[-2:-1], **kwargs)
            created += made
        return created


@dataclass(frozen=True)
class DataPlaneSettings:
    """What every private data-plane service (storage, Key Vault, registry) shares: where it
    lives, how it is reached and logged, and how it is kept from deletion."""

    naming: Naming
    region: str
    endpoints: RegionalEndpoints
    log_analytics_workspace_id: pulumi.Input[str]
    protect: bool
    lock: bool
    tags: dict[str, str] = field(default_factory=dict)
    # The unit creates its resource groups (platform:resourceGroups: program), or uses the delivery's.
    create_groups: bool = False
    # region -> its Log Analytics workspace, for resources outside the primary region (a
    # workspace per region with clusters, decision 0008)
    workspace_ids: Mapping[str, pulumi.Input[str]] = field(default_factory=dict)

    def workspace(self, region: str) -> pulumi.Input[str]:
        """Where a resource in `region` sends its logs: its region's workspace."""
        return self.workspace_ids.get(region, self.log_analytics_workspace_id)
