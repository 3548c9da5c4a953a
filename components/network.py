"""One region's spoke network: VNet, subnets with NSGs, egress, and peering to the hub.

Subnets are separate `Subnet` resources (never inline in the VNet, which would fight
them), created one after another because Azure rejects concurrent writes to one VNet.
No subnet has default outbound access: nodes leave through our NAT gateway or, with
`userDefinedRouting`, through the region's Azure Firewall (components/firewall.py), which
is built first: its subnet, then the firewall, then the route table that sends 0.0.0.0/0
to it, then the subnets that use that route table.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from ipaddress import IPv4Network

import pulumi
from pulumi_azure_native import network

from components.firewall import EgressFirewall, EgressFirewallArgs
from components.groups import Group, public_address, resource_group, standard_public_ip
from planning.egress import ApplicationRule, InboundRule, NetworkRule
from planning.naming import Naming, parse_resource_id
from stackconfig.model import FirewallConfig

# Azure requires this exact name for the subnet a firewall is deployed in.
FIREWALL_SUBNET_NAME = "AzureFirewallSubnet"


@dataclass(frozen=True)
class SubnetSpec:
    """A subnet to create: `role` names it, `egress` attaches the NAT gateway or route table."""

    key: str
    role: str
    prefix: IPv4Network
    egress: bool = False
    delegation: str | None = None
    # The firewall's own subnet: fixed name, no NSG (Azure rejects one), no route table.
    firewall: bool = False
    # Inbound rules of its NSG beyond Azure's defaults (a Managed Lustre subnet's).
    inbound: tuple[InboundRule, ...] = ()
    # It holds a Private Link service's NAT addresses (the serving gateway's, which
    # cloud-provider-azure creates): Azure requires its Private Link service network policies off,
    # and the cloud provider turns them off itself; the program says so too, or every deploy
    # would turn them back on (the SDK's default is Enabled).
    private_link_service: bool = False


@dataclass(frozen=True)
class HubPeeringSpec:
    virtual_network_id: str
    create_hub_side: bool
    use_remote_gateways: bool
    # Provider for the hub's subscription, which may not be the deployment's.
    provider: pulumi.ProviderResource | None = None
    # Hub-side peerings of one hub VNet are written one at a time (one region after another).
    after: pulumi.Resource | None = None


@dataclass(frozen=True)
class FirewallSpec:
    settings: FirewallConfig
    rules: list[ApplicationRule]
    source_ranges: list[str]
    zones: list[str]
    log_analytics_workspace_id: pulumi.Input[str]
    # severity -> the action groups its Azure Monitor alerts reach (components/alerting.py)
    alert_routes: Mapping[str, list[pulumi.Input[str]]] = field(default_factory=dict)
    network_rules: list[NetworkRule] = field(default_factory=list)
    # What it does not SNAT (None: Azure's default, IANA's private ranges).
    private_ranges: tuple[str, ...] | None = None
    # The region's Azure Monitor workspace query host, where KEDA reads its signals (an output of
    # the workspace: its name carries a suffix Azure picks).
    query_hosts: list[pulumi.Input[str]] = field(default_factory=list)


@dataclass(frozen=True)
class RegionalNetworkArgs:
    naming: Naming
    region: str
    address_space: list[IPv4Network]
    subnets: list[SubnetSpec]
    outbound_type: str
    # With userDefinedRouting: the region's firewall (its subnet is the spec with firewall=True).
    firewall: FirewallSpec | None
    nat_idle_timeout_minutes: int
    nat_public_ip_count: int
    hub: HubPeeringSpec | None
    protect: bool
    tags: dict[str, str] = field(default_factory=dict)
    # The unit creates its resource groups (platform:resourceGroups: program), or uses the delivery's.
    create_groups: bool = False


class RegionalNetwork(pulumi.ComponentResource):
    """Outputs: `vnet_id`, `vnet_name`, `resource_group_name`, and `subnet_ids[key]`."""

    vnet_id: pulumi.Output[str]
    subnet_ids: dict[str, pulumi.Output[str]]

    def __init__(self, name: str, args: RegionalNetworkArgs, opts: pulumi.ResourceOptions | None = None):
        super().__init__("platform:network:RegionalNetwork", name, None, opts)
        naming, region = args.naming, args.region
        child = pulumi.ResourceOptions(parent=self)

        group = resource_group(
            name, naming.regional("rg", region, "network"), region, args.tags, parent=self, create=args.create_groups
        )
        vnet = network.VirtualNetwork(
            f"{name}-vnet",
            virtual_network_name=naming.regional("vnet", region),
            resource_group_name=group.name,
            location=region,
            address_space=network.AddressSpaceArgs(address_prefixes=[str(space) for space in args.address_space]),
            tags=args.tags,
            # Subnets are managed as their own resources (see module docstring).
            opts=pulumi.ResourceOptions(parent=self, protect=args.protect),
        )

        self.subnet_ids: dict[str, pulumi.Output[str]] = {}
        self.firewall: EgressFirewall | None = None
        # The public addresses the region's nodes reach the internet from (NAT or firewall).
        self.egress_ips: list[pulumi.Output[str]] = []
        previous: pulumi.Resource | None = None
        for spec in (spec for spec in args.subnets if spec.firewall):
            previous = self._subnet(name, args, group, vnet, spec, None, None, previous)
            assert args.firewall is not None
            self.firewall = EgressFirewall(
                f"{name}-egress",
                EgressFirewallArgs(
                    naming=naming,
                    region=region,
                    resource_group_name=group.name,
                    subnet_id=self.subnet_ids[spec.key],
                    settings=args.firewall.settings,
                    rules=args.firewall.rules,
                    source_ranges=args.firewall.source_ranges,
                    zones=args.firewall.zones,
                    log_analytics_workspace_id=args.firewall.log_analytics_workspace_id,
                    alert_routes=args.firewall.alert_routes,
                    tags=args.tags,
                    network_rules=args.firewall.network_rules,
                    private_ranges=args.firewall.private_ranges,
                    query_hosts=args.firewall.query_hosts,
                ),
                opts=child,
            )
            self.egress_ips = [self.firewall.public_ip]
            # Nothing else writes to the VNet while the firewall deploys (minutes).
            previous = self.firewall
        nat_gateway, route_table = self._egress(name, args, group)
        for spec in args.subnets:
            if not spec.firewall:
                previous = self._subnet(name, args, group, vnet, spec, nat_gateway, route_table, previous)

        self.hub_side_peering: network.VirtualNetworkPeering | None = None
        if args.hub:
            self.hub_side_peering = self._peer_with_hub(name, args, group, vnet, previous)

        self.resource_group_name = group.name
        self.vnet_id = vnet.id
        self.vnet_name = vnet.name
        self.region = region
        self.register_outputs({"vnetId": vnet.id, "subnetIds": self.subnet_ids})

    def _subnet(
        self,
        name: str,
        args: RegionalNetworkArgs,
        group: Group,
        vnet: network.VirtualNetwork,
        spec: SubnetSpec,
        nat_gateway: network.NatGateway | None,
        route_table: network.RouteTable | None,
        previous: pulumi.Resource | None,
    ) -> network.Subnet:
        naming, region = args.naming, args.region
        nsg = None
        if not spec.firewall:
            nsg = network.NetworkSecurityGroup(
                f"{name}-nsg-{spec.key}",
                network_security_group_name=naming.regional("nsg", region, spec.key),
                resource_group_name=group.name,
                location=region,
                security_rules=[
                    network.SecurityRuleArgs(
                        name=rule.name,
                        priority=rule.priority,
                        direction=network.SecurityRuleDirection.INBOUND,
                        access=network.SecurityRuleAccess(rule.access),
                        protocol=network.SecurityRuleProtocol(rule.protocol),
                        source_address_prefixes=list(rule.sources),
                        source_port_range="*",
                        destination_address_prefix="*",
                        destination_port_ranges=list(rule.ports),
                    )
                    for rule in spec.inbound
                ]
                or None,
                tags=args.tags,
                opts=pulumi.ResourceOptions(parent=self),
            )
        subnet = network.Subnet(
            f"{name}-snet-{spec.key}",
            subnet_name=FIREWALL_SUBNET_NAME if spec.firewall else naming.regional("snet", region, spec.key),
            resource_group_name=group.name,
            virtual_network_name=vnet.name,
            address_prefix=str(spec.prefix),
            # The firewall's subnet is the way out; every other subnet goes through it or NAT.
            default_outbound_access=None if spec.firewall else False,
            network_security_group=network.NetworkSecurityGroupArgs(id=nsg.id) if nsg else None,
            nat_gateway=network.SubResourceArgs(id=nat_gateway.id) if spec.egress and nat_gateway else None,
            route_table=network.RouteTableArgs(id=route_table.id) if spec.egress and route_table else None,
            delegations=[network.DelegationArgs(name=spec.delegation.replace("/", "-"), service_name=spec.delegation)]
            if spec.delegation
            else None,
            # Let NSGs and route tables apply to private endpoints too.
            private_endpoint_network_policies=None
            if spec.firewall
            else network.VirtualNetworkPrivateEndpointNetworkPolicies.ENABLED,
            private_link_service_network_policies=network.VirtualNetworkPrivateLinkServiceNetworkPolicies.DISABLED
            if spec.private_link_service
            else None,
            opts=pulumi.ResourceOptions(parent=self, depends_on=[previous] if previous else None),
        )
        self.subnet_ids[spec.key] = subnet.id
        return subnet

    def _egress(
        self, name: str, args: RegionalNetworkArgs, group: Group
    ) -> tuple[network.NatGateway | None, network.RouteTable | None]:
        naming, region = args.naming, args.region
        child = pulumi.ResourceOptions(parent=self)
        if args.outbound_type == "userDefinedRouting":
            assert self.firewall is not None, "userDefinedRouting needs the region's firewall subnet"
            route_table = network.RouteTable(
                f"{name}-rt",
                route_table_name=naming.regional("rt", region, "egress"),
                resource_group_name=group.name,
                location=region,
                # Routes learned over BGP (e.g. a gateway's 0.0.0.0/0) must not bypass the firewall.
                disable_bgp_route_propagation=True,
                routes=[
                    network.RouteArgs(
                        name="default-to-firewall",
                        address_prefix="0.0.0.0/0",
                        next_hop_type=network.RouteNextHopType.VIRTUAL_APPLIANCE,
                        next_hop_ip_address=self.firewall.private_ip,
                    )
                ],
                tags=args.tags,
                opts=child,
            )
            return None, route_table

        public_ips = [
            standard_public_ip(
                f"{name}-nat-pip-{i}",
                naming.regional("pip", region, "nat", str(i)),
                group_name=group.name,
                region=region,
                tags=args.tags,
                parent=self,
            )
            for i in range(1, args.nat_public_ip_count + 1)
        ]
        self.egress_ips = [public_address(ip) for ip in public_ips]
        nat_gateway = network.NatGateway(
            f"{name}-nat",
            nat_gateway_name=naming.regional("ng", region),
            resource_group_name=group.name,
            location=region,
            sku=network.NatGatewaySkuArgs(name=network.NatGatewaySkuName.STANDARD),
            idle_timeout_in_minutes=args.nat_idle_timeout_minutes,
            public_ip_addresses=[network.SubResourceArgs(id=ip.id) for ip in public_ips],
            tags=args.tags,
            opts=child,
        )
        return nat_gateway, None

    def _peer_with_hub(
        self,
        name: str,
        args: RegionalNetworkArgs,
        group: Group,
        vnet: network.VirtualNetwork,
        last_subnet: pulumi.Resource | None,
    ) -> network.VirtualNetworkPeering | None:
        """Both halves of the hub peering; returns the hub-side half (if this program owns it)."""
        hub = args.hub
        assert hub is not None
        hub_side = None
        if hub.create_hub_side:
            hub_id = parse_resource_id(hub.virtual_network_id)
            hub_side = network.VirtualNetworkPeering(
                f"{name}-from-hub",
                virtual_network_peering_name=f"peer-to-{args.naming.regional('vnet', args.region)}",
                resource_group_name=hub_id.resource_group,
                virtual_network_name=hub_id.name,
                remote_virtual_network=network.SubResourceArgs(id=vnet.id),
                allow_virtual_network_access=True,
                allow_forwarded_traffic=True,
                # The spoke may use the hub's VPN/ExpressRoute gateway only if the hub offers it.
                allow_gateway_transit=hub.use_remote_gateways,
                opts=pulumi.ResourceOptions(
                    parent=self,
                    provider=hub.provider,
                    depends_on=[r for r in (last_subnet, hub.after) if r is not None],
                ),
            )
        network.VirtualNetworkPeering(
            f"{name}-to-hub",
            virtual_network_peering_name="peer-to-hub",
            resource_group_name=group.name,
            virtual_network_name=vnet.name,
            remote_virtual_network=network.SubResourceArgs(id=hub.virtual_network_id),
            allow_virtual_network_access=True,
            # Return traffic from the hub firewall arrives forwarded.
            allow_forwarded_traffic=True,
            use_remote_gateways=hub.use_remote_gateways,
            # After the hub side, which must offer gateway transit before the spoke uses it.
            opts=pulumi.ResourceOptions(parent=self, depends_on=[r for r in (last_subnet, hub_side) if r is not None]),
        )
        return hub_side


def peer_regions(
    first: RegionalNetwork, second: RegionalNetwork, parent: pulumi.Resource | None
) -> list[network.VirtualNetworkPeering]:
    """Both halves of a peering between two regions of one environment."""
    peerings = []
    for local, remote in ((first, second), (second, first)):
        peerings.append(
            network.VirtualNetworkPeering(
                f"peer-{local.region}-to-{remote.region}",
                virtual_network_peering_name=f"peer-to-{remote.region}",
                resource_group_name=local.resource_group_name,
                virtual_network_name=local.vnet_name,
                remote_virtual_network=network.SubResourceArgs(id=remote.vnet_id),
                allow_virtual_network_access=True,
                allow_forwarded_traffic=True,
                # After both networks are complete: a peering written while the VNet's subnets
                # or hub peering are still changing fails with AnotherOperationInProgress.
                opts=pulumi.ResourceOptions(parent=parent, depends_on=[first, second]),
            )
        )
    return peerings
