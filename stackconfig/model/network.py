"""The network: the hub, egress (NAT gateway or Azure Firewall), the regions' address plans."""

from __future__ import annotations

import re
from ipaddress import IPv4Address, IPv4Network
from typing import Annotated, Literal, Optional

from pydantic import AfterValidator, Field, StringConstraints

from stackconfig.model.base import (
    Model,
    RegionName,
)

ResourceGroupId = Annotated[
    str, StringConstraints(pattern=r"(?i)^/subscriptions/[0-9a-f-]{36}/resourceGroups/[-\w._()]+$")
]


class HubConfig(Model):
    """The hub VNet (deploy runners, firewall, on-premises gateways) to peer with."""

    virtual_network_id: Annotated[
        str,
        StringConstraints(
            pattern=r"(?i)^/subscriptions/[0-9a-f-]{36}/resourceGroups/[-\w._()]+"
            r"/providers/Microsoft\.Network/virtualNetworks/[-\w._]+$"
        ),
    ] = Field(
        description="Hub VNet resource ID to peer with (runners, firewall, gateways); may be in another subscription."
    )
    address_space: list[IPv4Network] = Field(min_length=1, description="The hub's ranges, checked for overlaps.")
    create_hub_side_peering: bool = Field(
        default=False,
        description="Also create the hub-to-spoke half, which needs write access to the hub VNet: only for a hub this"
        " environment has to itself (no `privateDnsZonesResourceGroupId`, and the delivery's `environments.<env>.ownHub`). A hub"
        " that serves several environments is written by its owner alone (stack output `hubRequests`).",
    )
    use_remote_gateways: bool = Field(default=False, description="Route through the hub's VPN/ExpressRoute gateway.")
    private_dns_zones_resource_group_id: Optional[ResourceGroupId] = Field(
        default=None,
        description="Resource group ID of the hub's central privatelink zones. Set it when the hub serves "
        "several environments (a VNet links to one zone of each name): the environment then registers its"
        " endpoints in those zones instead of creating its own, and its private API servers in subzones of its own"
        " there (`<prefix>-<env>.privatelink.<region>.azmk8s.io`). The hub's owner creates the zones and subzones"
        " and links the environment's VNets (stack output `hubRequests`).",
    )


class NatGatewayConfig(Model):
    idle_timeout_minutes: int = Field(default=4, ge=4, le=120, description="Idle TCP timeout of the NAT gateway.")
    public_ip_count: int = Field(
        default=1,
        ge=1,
        le=16,
        description="Public IPs of the NAT gateway, each giving 64,512 SNAT ports; large fleets need more than one.",
    )


def _fqdn(value: str) -> str:
    value = value.lower()
    if not FQDN.match(value):
        raise ValueError(f"{value!r} is not a host name: use e.g. pypi.org, or *.example.com for its subdomains")
    return value


# A host name, or `*.` and a domain of at least two labels (never `*` or `*.com`).
FQDN = re.compile(r"^(\*\.)?([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]{2,63}$")
Fqdn = Annotated[str, AfterValidator(_fqdn)]


class FirewallConfig(Model):
    """The Azure Firewall in each region's VNet that every node's egress goes through.

    Its policy allows what AKS needs (the AzureKubernetesService FQDN tag and the
    monitoring endpoints), the `allowedFqdns` below and the teams' `egressFqdns`, over
    HTTPS; everything else is denied. Images come through the platform's registry over
    Private Link, so no public registry may be listed.
    """

    sku: Literal["Standard", "Premium"] = Field(
        default="Premium", description="`Premium` adds intrusion detection and prevention (IDPS)."
    )
    threat_intel_mode: Literal["Alert", "Deny"] = Field(
        default="Deny", description="`Alert` or `Deny` traffic to Microsoft's known-malicious addresses and domains."
    )
    intrusion_detection: Optional[Literal["Off", "Alert", "Deny"]] = Field(
        default=None, description="IDPS signature mode, Premium only. Unset: `Deny` on Premium, `Off` on Standard."
    )
    allowed_fqdns: list[Fqdn] = Field(
        default_factory=list,
        description="HTTPS destinations every node may reach beyond AKS's own (e.g. OS mirrors); host names "
        "or `*.domain`, never a public registry.",
    )

    @property
    def intrusion_detection_mode(self) -> str:
        if self.intrusion_detection is not None:
            return self.intrusion_detection
        return "Deny" if self.sku == "Premium" else "Off"


class EgressConfig(Model):
    """How nodes reach the internet. There is no default outbound access."""

    outbound_type: Literal["userAssignedNATGateway", "userDefinedRouting"] = Field(
        default="userAssignedNATGateway",
        description="`userAssignedNATGateway`: a NAT gateway this program creates on the node subnets. "
        "`userDefinedRouting`: 0.0.0.0/0 is routed to an Azure Firewall this program creates in "
        "each region (deny by default, `firewall` below); needs `subnets.firewall` in each "
        "region.",
    )
    firewall: FirewallConfig = Field(
        default_factory=FirewallConfig,
        description="The Azure Firewall in each region's VNet (with `outboundType: userDefinedRouting`): "
        "AKS's needs, `allowedFqdns` and the teams' `egressFqdns` over HTTPS are allowed, "
        "everything else denied.",
    )
    nat_gateway: NatGatewayConfig = Field(
        default_factory=NatGatewayConfig,
        description="The NAT gateway on the node subnets (with `outboundType: userAssignedNATGateway`).",
    )


class RegionSubnets(Model):
    private_endpoints: IPv4Network = Field(description="Subnet for private endpoints.")
    lustre: Optional[IPv4Network] = Field(
        default=None,
        description="The region's Azure Managed Lustre file system's own subnet (`platform:lustre`), sized for its "
        "capacity (/27 up to 16 TiB, /26 to 40, /25 to 92, /24 to 196, /23 to 400); nothing else goes in it.",
    )
    firewall: Optional[IPv4Network] = Field(
        default=None,
        description="`AzureFirewallSubnet` of the region's egress firewall, /26 or larger; required with "
        "`outboundType: userDefinedRouting`, and only then.",
    )


class RegionNetworkConfig(Model):
    """The VNet of one region that hosts clusters."""

    address_space: list[IPv4Network] = Field(
        min_length=1, description="The region's VNet ranges (one VNet per region that hosts a cluster)."
    )
    subnets: RegionSubnets = Field(description="The region's shared subnets.")


class NetworkConfig(Model):
    pod_cidr: IPv4Network = Field(
        description="Overlay pod range; each node takes a /24, so it must hold every cluster's pools at max +"
        " surge. Cannot be enlarged later. May be reused by every cluster of the environment."
    )
    service_cidr: IPv4Network = Field(description="Kubernetes service range, /12 or smaller.")
    dns_service_ip: IPv4Address = Field(
        alias="dnsServiceIP", description="Cluster DNS address inside `serviceCidr`, not its first address."
    )
    regions: dict[RegionName, RegionNetworkConfig] = Field(
        min_length=1, description="One VNet per region that hosts a cluster, by ARM region name (`eastus2`)."
    )
    hub: Optional[HubConfig] = Field(
        default=None,
        description="The hub VNet (deploy runners, firewall, on-premises gateways) to peer with. Unset: no peering.",
    )
    on_premises_ranges: list[IPv4Network] = Field(
        default_factory=list, description="Ranges reached through the hub, checked for overlaps."
    )
    egress: EgressConfig = Field(
        default_factory=EgressConfig, description="How nodes reach the internet; there is no default outbound access."
    )
