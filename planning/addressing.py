"""Address arithmetic for the network plan, done with `ipaddress` only."""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass
from ipaddress import IPv4Address, IPv4Network
from itertools import combinations

from facts.aks_limits import AZURE_RESERVED_ADDRESSES_PER_SUBNET, OVERLAY_NODE_PREFIX


def surge_nodes(max_count: int, max_surge: str) -> int:
    """Extra nodes an upgrade adds to a pool at its largest: "33%" rounds up, "5" is 5."""
    if max_surge.endswith("%"):
        return math.ceil(max_count * int(max_surge[:-1]) / 100)
    return int(max_surge)


def usable_addresses(subnet: IPv4Network) -> int:
    """Addresses Azure lets resources take in a subnet."""
    return max(subnet.num_addresses - AZURE_RESERVED_ADDRESSES_PER_SUBNET, 0)


def overlay_node_capacity(pod_cidr: IPv4Network) -> int:
    """How many nodes an overlay pod CIDR can serve (one /24 each)."""
    if pod_cidr.prefixlen > OVERLAY_NODE_PREFIX:
        return 0
    return int(2 ** (OVERLAY_NODE_PREFIX - pod_cidr.prefixlen))


def smallest_prefix_for(addresses: int) -> int:
    """The longest prefix (smallest subnet) that holds `addresses` plus Azure's reserved five."""
    needed = addresses + AZURE_RESERVED_ADDRESSES_PER_SUBNET
    return 32 - max(math.ceil(math.log2(needed)), 3)  # Azure's smallest subnet is a /29


def dns_service_ip_problem(dns_service_ip: IPv4Address, service_cidr: IPv4Network) -> str | None:
    """Why `dns_service_ip` cannot be the cluster DNS address, or None if it can."""
    if dns_service_ip not in service_cidr:
        return f"{dns_service_ip} is outside serviceCidr {service_cidr}"
    reserved = {
        service_cidr.network_address: "the network address",
        service_cidr.network_address + 1: "the first address (kubernetes.default takes it)",
        service_cidr.broadcast_address: "the broadcast address",
    }
    if dns_service_ip in reserved:
        return f"{dns_service_ip} is {reserved[dns_service_ip]} of serviceCidr {service_cidr}"
    return None


@dataclass(frozen=True)
class NamedRange:
    """An address range and the config key that declared it."""

    key: str
    network: IPv4Network


def overlapping_pairs(ranges: Iterable[NamedRange]) -> list[tuple[NamedRange, NamedRange]]:
    """Every pair of ranges that share at least one address, in input order."""
    return [(a, b) for a, b in combinations(list(ranges), 2) if a.network.overlaps(b.network)]


def contained_in_any(network: IPv4Network, spaces: Iterable[IPv4Network]) -> bool:
    return any(network.subnet_of(space) for space in spaces)
