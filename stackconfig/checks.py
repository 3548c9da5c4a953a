"""Rules that relate several config fields: address plan, AKS limits, identity, upgrades.

Each check returns `ConfigProblem`s instead of raising, so that one run reports every
problem of a stack at once. Keys are written as a user finds them in the stack file:
`platform:clusters.prod1.subnets.nodes`.
"""

from __future__ import annotations

from dataclasses import dataclass
from ipaddress import IPv4Network
from typing import Callable, Iterator

from planning import addressing, limits
from planning.addressing import NamedRange
from stackconfig.model import REQUIRED_TAGS, ClusterConfig, PlatformConfig, PoolConfig

NAMESPACE = "platform"
# Namespaces AKS and its add-ons own; a team must not claim them.
RESERVED_NAMESPACES = frozenset(
    {"default", "kube-system", "kube-public", "kube-node-lease", "gatekeeper-system"}
)


@dataclass(frozen=True, order=True)
class ConfigProblem:
    key: str
    reason: str

    def __str__(self) -> str:
        return f"{self.key}: {self.reason}"


def key(*parts: str | int) -> str:
    """`key("clusters", "eus2", "nodePools", "gpu")` -> `platform:clusters.eus2.nodePools.gpu`."""
    text = ""
    for part in parts:
        if isinstance(part, int):
            text += f"[{part}]"
        else:
            text += f".{part}" if text else part
    return f"{NAMESPACE}:{text}"


def _n(value: int) -> str:
    return f"{value:,}"


@dataclass(frozen=True)
class PoolPlacement:
    """A pool with the config key it was declared under."""

    key: str
    pool: PoolConfig

    @property
    def peak_nodes(self) -> int:
        """Nodes the pool can reach during an upgrade of a fully scaled-out pool."""
        return self.pool.max_count + addressing.surge_nodes(self.pool.max_count, self.pool.max_surge)


def cluster_pools(name: str, cluster: ClusterConfig) -> list[PoolPlacement]:
    pools = [PoolPlacement(key("clusters", name, "systemPool"), cluster.system_pool)]
    pools += [
        PoolPlacement(key("clusters", name, "nodePools", pool_name), pool)
        for pool_name, pool in cluster.node_pools.items()
    ]
    return pools


def check_tags(config: PlatformConfig) -> Iterator[ConfigProblem]:
    for tag in REQUIRED_TAGS:
        if not config.tags.get(tag):
            yield ConfigProblem(key("tags", tag), "is required on every resource (owner, cost-center)")
    if "environment" in config.tags:
        yield ConfigProblem(
            key("tags", "environment"), "is set from platform:environment; remove it here"
        )


def check_regions(config: PlatformConfig) -> Iterator[ConfigProblem]:
    declared = config.network.regions
    used = {cluster.region for cluster in config.clusters.values()}
    for name, cluster in config.clusters.items():
        if cluster.region not in declared:
            yield ConfigProblem(
                key("clusters", name, "region"),
                f"{cluster.region} has no VNet: add it under platform:network.regions "
                f"(declared: {', '.join(sorted(declared)) or 'none'})",
            )
    for region in declared:
        if region not in used:
            yield ConfigProblem(
                key("network", "regions", region), "no cluster runs in this region; remove it"
            )


def _owned_ranges(config: PlatformConfig) -> list[NamedRange]:
    """Ranges this environment allocates: its VNets, the service CIDR and the pod CIDR."""
    network = config.network
    ranges = [
        NamedRange(key("network", "regions", region, "addressSpace", i), space)
        for region, vnet in network.regions.items()
        for i, space in enumerate(vnet.address_space)
    ]
    ranges.append(NamedRange(key("network", "serviceCidr"), network.service_cidr))
    if any(cluster.cni == "overlay" for cluster in config.clusters.values()):
        ranges.append(NamedRange(key("network", "podCidr"), network.pod_cidr))
    return ranges


def _external_ranges(config: PlatformConfig) -> list[NamedRange]:
    """Ranges other networks own (hub, on-premises) that ours must not collide with."""
    network = config.network
    ranges = []
    if network.hub:
        ranges += [
            NamedRange(key("network", "hub", "addressSpace", i), space)
            for i, space in enumerate(network.hub.address_space)
        ]
    ranges += [
        NamedRange(key("network", "onPremisesRanges", i), space)
        for i, space in enumerate(network.on_premises_ranges)
    ]
    return ranges


def check_address_overlaps(config: PlatformConfig) -> Iterator[ConfigProblem]:
    owned = _owned_ranges(config)
    forbidden = [IPv4Network(r) for r in limits.FORBIDDEN_RANGES]
    for declared in owned:
        for reserved in forbidden:
            if declared.network.overlaps(reserved):
                yield ConfigProblem(declared.key, f"{declared.network} overlaps {reserved}, which AKS cannot use")
    for first, second in addressing.overlapping_pairs(owned + _external_ranges(config)):
        # Name the range this environment owns: the hub's and on-premises' are not ours to move.
        subject, other = (first, second) if second not in owned else (second, first)
        yield ConfigProblem(subject.key, f"{subject.network} overlaps {other.key} ({other.network})")


def _region_subnets(config: PlatformConfig, region: str) -> list[NamedRange]:
    vnet = config.network.regions[region]
    subnets = [
        NamedRange(
            key("network", "regions", region, "subnets", "privateEndpoints"),
            vnet.subnets.private_endpoints,
        )
    ]
    for name, cluster in config.clusters.items():
        if cluster.region != region:
            continue
        for role, subnet in cluster.subnets.model_dump(by_alias=True, exclude_none=True).items():
            subnets.append(NamedRange(key("clusters", name, "subnets", role), subnet))
    return subnets


def check_subnets(config: PlatformConfig) -> Iterator[ConfigProblem]:
    for region, vnet in config.network.regions.items():
        subnets = _region_subnets(config, region)
        for subnet in subnets:
            if subnet.network.prefixlen > 29:
                yield ConfigProblem(subnet.key, f"{subnet.network} is smaller than Azure's minimum /29")
            if not addressing.contained_in_any(subnet.network, vnet.address_space):
                spaces = ", ".join(str(s) for s in vnet.address_space)
                yield ConfigProblem(
                    subnet.key,
                    f"{subnet.network} is outside the {region} VNet's address space ({spaces})",
                )
        for first, second in addressing.overlapping_pairs(subnets):
            yield ConfigProblem(second.key, f"{second.network} overlaps {first.key} ({first.network})")


def _subnet_capacity_problem(
    subnet_key: str, subnet: IPv4Network, pools: list[PoolPlacement], per_node: Callable[[PoolConfig], int], what: str
) -> ConfigProblem | None:
    needed = sum(p.peak_nodes * per_node(p.pool) for p in pools)
    available = addressing.usable_addresses(subnet)
    if needed <= available:
        return None
    nodes = sum(p.pool.max_count for p in pools)
    peak = sum(p.peak_nodes for p in pools)
    return ConfigProblem(
        subnet_key,
        f"({subnet}) is too small: the pools can grow to {_n(peak)} nodes with surge "
        f"({_n(nodes)} max + {_n(peak - nodes)} surge), needing {_n(needed)} {what} "
        f"but it has {_n(available)} usable (Azure reserves 5); "
        f"use a /{addressing.smallest_prefix_for(needed)} or larger",
    )


def check_cluster_capacity(config: PlatformConfig) -> Iterator[ConfigProblem]:
    network = config.network
    for name, cluster in config.clusters.items():
        pools = cluster_pools(name, cluster)
        system, user = pools[:1], pools[1:]
        one_each = lambda pool: 1  # noqa: E731 - one VNet address per node
        for subnet_key, subnet, placed in (
            (key("clusters", name, "subnets", "system"), cluster.subnets.system, system),
            (key("clusters", name, "subnets", "nodes"), cluster.subnets.nodes, user),
        ):
            problem = _subnet_capacity_problem(subnet_key, subnet, placed, one_each, "addresses")
            if problem:
                yield problem

        if cluster.cni == "podSubnet":
            pods_key = key("clusters", name, "subnets", "pods")
            if cluster.subnets.pods is None:
                yield ConfigProblem(pods_key, "is required when cni is podSubnet")
            else:
                problem = _subnet_capacity_problem(
                    pods_key, cluster.subnets.pods, pools, lambda pool: pool.max_pods, "pod addresses"
                )
                if problem:
                    yield problem
        else:
            if cluster.subnets.pods is not None:
                yield ConfigProblem(
                    key("clusters", name, "subnets", "pods"),
                    "is only used with cni: podSubnet; with overlay, pods take network.podCidr",
                )
            peak = sum(p.peak_nodes for p in pools)
            capacity = addressing.overlay_node_capacity(network.pod_cidr)
            if peak > capacity:
                yield ConfigProblem(
                    key("network", "podCidr"),
                    f"({network.pod_cidr}) is too small for cluster {name}: overlay gives each node a "
                    f"/24, so it serves {_n(capacity)} nodes but the pools can grow to {_n(peak)} "
                    f"with surge; use a /{limits.OVERLAY_NODE_PREFIX - max(peak - 1, 1).bit_length()} "
                    "or larger (it cannot be enlarged after creation)",
                )


def check_cluster_limits(config: PlatformConfig) -> Iterator[ConfigProblem]:
    for name, cluster in config.clusters.items():
        pools = cluster_pools(name, cluster)
        for placed in pools:
            pool = placed.pool
            if pool.min_count > pool.max_count:
                yield ConfigProblem(
                    f"{placed.key}.minCount",
                    f"{pool.min_count} is greater than maxCount {pool.max_count}",
                )
            if pool.max_count > limits.MAX_NODES_PER_POOL:
                yield ConfigProblem(
                    f"{placed.key}.maxCount",
                    f"{_n(pool.max_count)} exceeds AKS's {_n(limits.MAX_NODES_PER_POOL)} nodes per pool",
                )
            for zone in pool.zones or []:
                if zone not in cluster.zones:
                    yield ConfigProblem(
                        f"{placed.key}.zones",
                        f"zone {zone} is not one of the cluster's zones ({', '.join(cluster.zones)})",
                    )
        total = sum(p.pool.max_count for p in pools)
        if total > limits.MAX_NODES_PER_CLUSTER:
            yield ConfigProblem(
                key("clusters", name, "nodePools"),
                f"the pools add up to {_n(total)} nodes, over AKS's {_n(limits.MAX_NODES_PER_CLUSTER)} "
                "per cluster; split the fleet across clusters",
            )
        if len(pools) > limits.MAX_POOLS_PER_CLUSTER:
            yield ConfigProblem(
                key("clusters", name, "nodePools"),
                f"{len(pools)} pools (with the system pool) exceed AKS's {limits.MAX_POOLS_PER_CLUSTER} per cluster",
            )


def check_service_network(config: PlatformConfig) -> Iterator[ConfigProblem]:
    network = config.network
    if network.service_cidr.prefixlen < limits.SERVICE_CIDR_MIN_PREFIX:
        yield ConfigProblem(
            key("network", "serviceCidr"),
            f"{network.service_cidr} is too large: AKS takes a /{limits.SERVICE_CIDR_MIN_PREFIX} at most",
        )
    problem = addressing.dns_service_ip_problem(network.dns_service_ip, network.service_cidr)
    if problem:
        yield ConfigProblem(key("network", "dnsServiceIP"), problem)
    if network.pod_cidr.prefixlen > limits.OVERLAY_NODE_PREFIX:
        yield ConfigProblem(
            key("network", "podCidr"), f"{network.pod_cidr} is smaller than one node's /24"
        )


def check_egress(config: PlatformConfig) -> Iterator[ConfigProblem]:
    egress = config.network.egress
    firewall_key = key("network", "egress", "firewallPrivateIp")
    if egress.outbound_type == "userDefinedRouting":
        if egress.firewall_private_ip is None:
            yield ConfigProblem(firewall_key, "is required when outboundType is userDefinedRouting")
            return
        spaces = [s for vnet in config.network.regions.values() for s in vnet.address_space]
        if config.network.hub:
            spaces += config.network.hub.address_space
        if not any(egress.firewall_private_ip in space for space in spaces):
            yield ConfigProblem(
                firewall_key,
                f"{egress.firewall_private_ip} is in no VNet of this environment or its hub",
            )
    elif egress.firewall_private_ip is not None:
        yield ConfigProblem(
            firewall_key, "is only used when outboundType is userDefinedRouting; remove it"
        )


def check_api_servers(config: PlatformConfig) -> Iterator[ConfigProblem]:
    for name, cluster in config.clusters.items():
        api = cluster.api_server
        ranges_key = key("clusters", name, "apiServer", "authorizedIpRanges")
        if api.private and api.authorized_ip_ranges:
            yield ConfigProblem(
                ranges_key, "does not apply to a private API server; remove it or set private: false"
            )
        if not api.private and not api.authorized_ip_ranges:
            yield ConfigProblem(
                ranges_key,
                "is required for a public API server (an empty list would open it to the internet)",
            )
        if len(api.authorized_ip_ranges) > limits.MAX_AUTHORIZED_IP_RANGES:
            yield ConfigProblem(ranges_key, f"AKS takes at most {limits.MAX_AUTHORIZED_IP_RANGES} ranges")
        for i, ip_range in enumerate(api.authorized_ip_ranges):
            if ip_range.prefixlen < limits.MIN_AUTHORIZED_IP_PREFIX:
                yield ConfigProblem(
                    f"{ranges_key}[{i}]",
                    f"{ip_range} opens the API server to a large part of the internet "
                    f"(ranges must be /{limits.MIN_AUTHORIZED_IP_PREFIX} or narrower)",
                )
        subnet_key = key("clusters", name, "subnets", "apiServer")
        subnet = cluster.subnets.api_server
        if api.vnet_integration and subnet is None:
            yield ConfigProblem(subnet_key, "is required when apiServer.vnetIntegration is true (a /28 or larger)")
        if not api.vnet_integration and subnet is not None:
            yield ConfigProblem(subnet_key, "is only used when apiServer.vnetIntegration is true; remove it")
        if subnet is not None and subnet.prefixlen > limits.API_SERVER_SUBNET_MAX_PREFIX:
            yield ConfigProblem(subnet_key, f"{subnet} is smaller than the /28 API server VNet integration needs")


def check_identity(config: PlatformConfig) -> Iterator[ConfigProblem]:
    without_local = [n for n, c in config.clusters.items() if c.disable_local_accounts]
    if without_local and not config.entra.admin_group_object_ids:
        yield ConfigProblem(
            key("entra", "adminGroupObjectIds"),
            "is empty, but local accounts are disabled on "
            f"{', '.join(without_local)}: nobody could administer the cluster",
        )


def check_upgrades(config: PlatformConfig) -> Iterator[ConfigProblem]:
    for name, cluster in config.clusters.items():
        version_key = key("clusters", name, "kubernetesVersion")
        channel = cluster.upgrades.channel
        version = cluster.kubernetes_version
        if channel in ("stable", "rapid"):
            if version is not None:
                yield ConfigProblem(
                    version_key,
                    f"must be left out with upgrades.channel {channel}: AKS owns the version",
                )
        elif version is None:
            yield ConfigProblem(version_key, f"is required with upgrades.channel {channel}")
        elif channel == "patch" and version.count(".") != 1:
            yield ConfigProblem(
                version_key,
                f"{version} pins a patch, but upgrades.channel patch lets AKS own patches: "
                "give major.minor only (e.g. 1.33)",
            )


def check_teams(config: PlatformConfig) -> Iterator[ConfigProblem]:
    owners: dict[str, str] = {}
    for team, spec in config.teams.items():
        for i, namespace in enumerate(spec.namespaces):
            namespace_key = key("teams", team, "namespaces", i)
            if namespace in RESERVED_NAMESPACES or namespace.startswith("kube-"):
                yield ConfigProblem(namespace_key, f"{namespace} is reserved for the cluster itself")
            elif namespace in owners:
                yield ConfigProblem(namespace_key, f"{namespace} already belongs to team {owners[namespace]}")
            else:
                owners[namespace] = team


CHECKS = (
    check_tags,
    check_regions,
    check_address_overlaps,
    check_subnets,
    check_service_network,
    check_cluster_limits,
    check_cluster_capacity,
    check_egress,
    check_api_servers,
    check_identity,
    check_upgrades,
    check_teams,
)


def find_problems(config: PlatformConfig) -> list[ConfigProblem]:
    """Every cross-field problem of a schema-valid config, sorted by key."""
    return sorted({problem for check in CHECKS for problem in check(config)})
