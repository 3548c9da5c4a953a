"""The address plan, subnets, regions, egress, isolation and API servers."""

from __future__ import annotations

from collections.abc import Iterator
from ipaddress import IPv4Network

from facts import aks_limits as limits
from facts.azure_endpoints import opened_domain
from planning import addressing, cluster_traffic, sandbox
from planning import egress as egress_plan
from planning.addressing import NamedRange
from stackconfig.keys import key
from stackconfig.model import (
    PlatformConfig,
)
from validation.checks.common import ConfigProblem


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
            yield ConfigProblem(key("network", "regions", region), "no cluster runs in this region; remove it")


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
        NamedRange(key("network", "onPremisesRanges", i), space) for i, space in enumerate(network.on_premises_ranges)
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
        yield ConfigProblem(subject.key, f"{subject.network} overlaps {other.key} ({other.network})", cause=True)


def _region_subnets(config: PlatformConfig, region: str) -> list[NamedRange]:
    vnet = config.network.regions[region]
    subnets = [
        NamedRange(key("network", "regions", region, "subnets", role), subnet)
        for role, subnet in vnet.subnets.model_dump(by_alias=True, exclude_none=True).items()
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
        yield ConfigProblem(key("network", "podCidr"), f"{network.pod_cidr} is smaller than one node's /24")


# Azure Firewall needs a subnet of at least this size (AzureFirewallSubnet).
FIREWALL_SUBNET_MAX_PREFIX = 26


def check_egress(config: PlatformConfig) -> Iterator[ConfigProblem]:
    egress = config.network.egress
    firewalled = egress.outbound_type == "userDefinedRouting"
    regions_with_clusters = {cluster.region for cluster in config.clusters.values()}
    for region, vnet in config.network.regions.items():
        subnet_key = key("network", "regions", region, "subnets", "firewall")
        subnet = vnet.subnets.firewall
        if firewalled and subnet is None and region in regions_with_clusters:
            yield ConfigProblem(subnet_key, "is required when outboundType is userDefinedRouting (a /26 or larger)")
        elif not firewalled and subnet is not None:
            yield ConfigProblem(subnet_key, "is only used when outboundType is userDefinedRouting; remove it")
        elif subnet is not None and subnet.prefixlen > FIREWALL_SUBNET_MAX_PREFIX:
            yield ConfigProblem(subnet_key, f"{subnet} is smaller than the /26 Azure Firewall needs")
    firewall = egress.firewall
    if firewall.sku == "Standard" and firewall.intrusion_detection not in (None, "Off"):
        yield ConfigProblem(
            key("network", "egress", "firewall", "intrusionDetection"), "needs the Premium sku; remove it or set Off"
        )
    destinations = [
        (key("network", "egress", "firewall", "allowedFqdns", i), fqdn) for i, fqdn in enumerate(firewall.allowed_fqdns)
    ]
    destinations += [
        (key("teams", team, "egressFqdns", i), fqdn)
        for team, spec in config.teams.items()
        for i, fqdn in enumerate(spec.egress_fqdns)
    ]
    for where, fqdn in destinations:
        registry = egress_plan.reaches_public_registry(fqdn)
        if registry:
            yield ConfigProblem(
                where,
                f"{fqdn} opens the public registry {registry}; images come through the platform's "
                "registry (add a cache rule under platform:registry.cacheRules)",
            )
        tenant_domain = opened_domain(fqdn)
        if tenant_domain:
            yield ConfigProblem(
                where,
                f"{fqdn} opens every tenant's {tenant_domain} endpoints, a way for data around the private "
                "data plane; name the one host, or reach the service through a private endpoint",
            )


def check_isolation(config: PlatformConfig) -> Iterator[ConfigProblem]:
    """High-risk namespaces need a sandbox pool, training namespaces are the team's and not
    sandboxed; FQDN egress needs ACNS on the cluster."""
    high_risk = [ns for spec in config.teams.values() for ns in spec.high_risk_namespaces]
    for team, spec in config.teams.items():
        for i, namespace in enumerate(spec.high_risk_namespaces):
            if namespace not in spec.namespaces:
                yield ConfigProblem(
                    key("teams", team, "highRiskNamespaces", i), f"{namespace} is not one of the team's namespaces"
                )
        for i, namespace in enumerate(spec.training_namespaces):
            where = key("teams", team, "trainingNamespaces", i)
            if namespace not in spec.namespaces:
                yield ConfigProblem(where, f"{namespace} is not one of the team's namespaces")
            elif namespace in spec.high_risk_namespaces:
                yield ConfigProblem(
                    where,
                    f"{namespace} is high-risk: its pods run in Kata VMs, which reach no InfiniBand device, and "
                    "a namespace cannot be both sandboxed and allowed IPC_LOCK",
                )
    for name, cluster in config.clusters.items():
        # A dispatcher runs no pods of the teams' jobs: its workers do.
        if high_risk and cluster.sandbox_pool is None and cluster.role == "workloads":
            yield ConfigProblem(
                key("clusters", name, "sandboxPool"),
                f"is required: high-risk namespaces ({', '.join(high_risk)}) run only on a sandbox pool",
            )
        pool = cluster.sandbox_pool
        if pool is not None and not sandbox.supports_nested_virtualization(pool.vm_size):
            yield ConfigProblem(
                key("clusters", name, "sandboxPool", "vmSize"),
                f"{pool.vm_size} has no nested virtualization, which Pod Sandboxing (Kata VMs) needs; "
                "use a Dsv3/Dsv4/Dsv5, Ddsv5, Esv5 or Fsv2 size, for example Standard_D8ds_v5",
            )
        if pool is not None and sandbox.SANDBOX_POOL_NAME in {*cluster.node_pools, *cluster.gpu_pools}:
            yield ConfigProblem(
                key("clusters", name, "nodePools", sandbox.SANDBOX_POOL_NAME),
                "is the sandbox pool's name; rename this pool",
            )
        if not cluster.advanced_networking:
            needs = cluster_traffic.fqdn_namespaces(config, name)
            if needs:
                yield ConfigProblem(
                    key("clusters", name, "advancedNetworking"),
                    f"must stay on: namespaces {', '.join(needs)} reach hosts by name (Cilium FQDN policies), "
                    "which AKS enforces only with Advanced Container Networking Services",
                )


def check_api_servers(config: PlatformConfig) -> Iterator[ConfigProblem]:
    for name, cluster in config.clusters.items():
        api = cluster.api_server
        ranges_key = key("clusters", name, "apiServer", "authorizedIpRanges")
        if api.private and api.authorized_ip_ranges:
            yield ConfigProblem(ranges_key, "does not apply to a private API server; remove it or set private: false")
        if not api.private and not api.authorized_ip_ranges:
            yield ConfigProblem(
                ranges_key,
                "is required for a public API server (an empty list would open it to the internet)",
            )
        # The program adds the region's egress addresses (its NAT gateway's or firewall's): nodes
        # reach a public API server from them (learn.microsoft.com/azure/aks/api-server-authorized-ip-ranges).
        egress_ips = (
            1
            if config.network.egress.outbound_type == "userDefinedRouting"
            else config.network.egress.nat_gateway.public_ip_count
        )
        if not api.private and len(api.authorized_ip_ranges) + egress_ips > limits.MAX_AUTHORIZED_IP_RANGES:
            yield ConfigProblem(
                ranges_key,
                f"AKS takes at most {limits.MAX_AUTHORIZED_IP_RANGES} ranges, with the {egress_ips} egress "
                "address(es) the platform adds",
            )
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
        if cluster.etcd_encryption and not api.vnet_integration:
            # use-kms-etcd-encryption.md: "KMS only supports API Server VNet Integration for
            # private key vault"; the platform's vaults are private.
            yield ConfigProblem(
                key("clusters", name, "etcdEncryption"),
                f"needs the API server's VNet integration to reach its private Key Vault, and "
                f"{key('clusters', name, 'apiServer', 'vnetIntegration')} is false: set etcdEncryption: false "
                "explicitly (a weakening) or turn VNet integration on",
            )
        if subnet is not None and subnet.prefixlen > limits.API_SERVER_SUBNET_MAX_PREFIX:
            yield ConfigProblem(subnet_key, f"{subnet} is smaller than the /28 API server VNet integration needs")
