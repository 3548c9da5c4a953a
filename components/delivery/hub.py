"""A minimal hub of the delivery's own (delivery:hub.create; planning/hub.py decides its names):
for a team without a hub, what the first deploy needs of one."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import pulumi
from pulumi_azure_native import monitor, network, privatedns, resources

from components.groups import standard_public_ip
from components.private_dns import PrivateEndpoints
from planning.hub import ENDPOINT_SUBNET, RUNNER_SUBNET, SHARED_ZONES, MinimalHubPlan


@dataclass(frozen=True)
class MinimalHubArgs:
    plan: MinimalHubPlan
    # Each environment's own API server subzones in the hub's zones (planning/private_link.py).
    api_server_zones: Sequence[str]
    tags: Mapping[str, str]


class MinimalHubNetwork(pulumi.ComponentResource):
    """The hub's VNet with a private-endpoint subnet and a runner subnet, whose egress goes through
    a NAT gateway (new subnets have no default outbound access; a hub firewall's allow-list is
    the hardened route: docs/deploying.md, "Runners"); every privatelink zone the state and the
    platform register in, and the environments' API server subzones, linked to the VNet, so the
    runners resolve them; and an Azure Monitor private link scope with its endpoint, which the
    environments join (platform:operations.privateLinkScope.scopeId)."""

    def __init__(self, name: str, args: MinimalHubArgs, opts: pulumi.ResourceOptions | None = None):
        super().__init__("platform:delivery:MinimalHub", name, None, opts)
        hub, tags = args.plan, dict(args.tags)
        region = hub.settings.location
        child = pulumi.ResourceOptions(parent=self)
        group = resources.ResourceGroup(
            f"{name}-group", resource_group_name=hub.resource_group, location=region, tags=tags, opts=child
        )
        ip = standard_public_ip(
            f"{name}-nat-ip", f"pip-{hub.vnet}-nat", group_name=group.name, region=region, tags=tags, parent=self
        )
        nat = network.NatGateway(
            f"{name}-nat",
            nat_gateway_name=f"ng-{hub.vnet}",
            resource_group_name=group.name,
            location=region,
            sku=network.NatGatewaySkuArgs(name=network.NatGatewaySkuName.STANDARD),
            public_ip_addresses=[network.SubResourceArgs(id=ip.id)],
            tags=tags,
            opts=child,
        )
        subnets = hub.subnets()
        vnet = network.VirtualNetwork(
            f"{name}-vnet",
            virtual_network_name=hub.vnet,
            resource_group_name=group.name,
            location=region,
            address_space=network.AddressSpaceArgs(address_prefixes=[hub.settings.address_space]),
            subnets=[
                network.SubnetArgs(
                    name=ENDPOINT_SUBNET,
                    address_prefix=subnets[ENDPOINT_SUBNET],
                    default_outbound_access=False,
                    private_endpoint_network_policies=network.VirtualNetworkPrivateEndpointNetworkPolicies.ENABLED,
                ),
                network.SubnetArgs(
                    name=RUNNER_SUBNET,
                    address_prefix=subnets[RUNNER_SUBNET],
                    default_outbound_access=False,
                    nat_gateway=network.SubResourceArgs(id=nat.id),
                ),
            ],
            tags=tags,
            opts=child,
        )
        self.zone_ids: dict[str, pulumi.Output[str]] = {}
        for zone_name in (*SHARED_ZONES, *args.api_server_zones):
            zone = privatedns.PrivateZone(
                f"{name}-{zone_name}",
                private_zone_name=zone_name,
                resource_group_name=group.name,
                location="global",
                tags=tags,
                opts=child,
            )
            privatedns.VirtualNetworkLink(
                f"{name}-{zone_name}-link",
                virtual_network_link_name=f"link-{hub.vnet}",
                private_zone_name=zone.name,
                resource_group_name=group.name,
                location="global",
                virtual_network=privatedns.SubResourceArgs(id=vnet.id),
                registration_enabled=False,
                resolution_policy=privatedns.ResolutionPolicy.DEFAULT,
                tags=tags,
                opts=pulumi.ResourceOptions(parent=zone),
            )
            self.zone_ids[zone_name] = zone.id
        # One scope per DNS: the environments' workspaces join it (their foundation's
        # hubRequests.monitorScopeMembers), and it ingests privately only.
        scope = monitor.PrivateLinkScope(
            f"{name}-scope",
            scope_name=hub.scope,
            resource_group_name=group.name,
            location="global",
            access_mode_settings=monitor.AccessModeSettingsArgs(
                ingestion_access_mode=monitor.AccessMode.PRIVATE_ONLY, query_access_mode=monitor.AccessMode.OPEN
            ),
            tags=tags,
            opts=child,
        )
        endpoint_subnet = vnet.id.apply(lambda vnet_id: f"{vnet_id}/subnets/{ENDPOINT_SUBNET}")
        PrivateEndpoints(region, endpoint_subnet, self.zone_ids).connect(
            name,
            target_id=scope.id,
            target_name=hub.scope,
            group_id="azuremonitor",
            resource_group_name=group.name,
            tags=tags,
            parent=self,
        )
        self.vnet_id = vnet.id
        self.register_outputs({"vnetId": vnet.id, "scopeId": scope.id})
