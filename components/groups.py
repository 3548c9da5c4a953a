"""Small Azure resources several components create the same way."""

from __future__ import annotations

from dataclasses import dataclass

import pulumi
from pulumi_azure_native import network, resources


@dataclass(frozen=True)
class Group:
    """A unit's resource group, by name: the delivery project's (components/platform/groups.py),
    or the unit's own."""

    name: pulumi.Output[str]


def resource_group(
    name: str, group_name: str, region: str, tags: dict[str, str], parent: pulumi.Resource, *, create: bool
) -> Group:
    """The group `group_name`: created here when the unit makes its own groups
    (platform:resourceGroups: program), kept in Azure if it ever leaves the program (an
    environment moving to the delivery's groups); otherwise the delivery's, by name."""
    if not create:
        return Group(pulumi.Output.from_input(group_name))
    group = resources.ResourceGroup(
        f"{name}-rg",
        resource_group_name=group_name,
        location=region,
        tags=tags,
        opts=pulumi.ResourceOptions(parent=parent, retain_on_delete=True),
    )
    return Group(group.name)


def standard_public_ip(
    name: str,
    ip_name: str,
    *,
    group_name: pulumi.Input[str],
    region: str,
    tags: dict[str, str],
    parent: pulumi.Resource,
    zones: list[str] | None = None,
) -> network.PublicIPAddress:
    """A static, regional Standard IPv4 address (what NAT gateways and firewalls take)."""
    return network.PublicIPAddress(
        name,
        public_ip_address_name=ip_name,
        resource_group_name=group_name,
        location=region,
        sku=network.PublicIPAddressSkuArgs(
            name=network.PublicIPAddressSkuName.STANDARD, tier=network.PublicIPAddressSkuTier.REGIONAL
        ),
        public_ip_allocation_method=network.IPAllocationMethod.STATIC,
        public_ip_address_version=network.IPVersion.I_PV4,
        zones=zones,
        tags=tags,
        opts=pulumi.ResourceOptions(parent=parent),
    )


def _assigned(address: str | None) -> str:
    if not address:
        raise ValueError("Azure returned a static public IP without its address")
    return address


def public_address(ip: network.PublicIPAddress) -> pulumi.Output[str]:
    """The address of a static public IP (Azure assigns it when the IP is created)."""
    return ip.ip_address.apply(_assigned)
