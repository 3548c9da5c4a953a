"""Rules that relate several config fields: address plan, AKS limits, identity, upgrades.

Each check returns `ConfigProblem`s instead of raising, so that one run reports every
problem of a stack at once. Keys are written as a user finds them in the stack file:
`platform:clusters.prod1.subnets.nodes`.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from functools import partial
from ipaddress import IPv4Network

from facts import aks_limits as limits
from facts import aks_versions, arm_tags
from facts.azure_endpoints import opened_domain
from facts.azure_regions import PAIRED_REGIONS, REGIONS
from facts.event_hubs import EVENT_HUBS_TIERS
from facts.flink import FLINK_CRD_VERSION, FLINK_VERSION, OPERATOR_FLINK_VERSIONS, OPERATOR_VERSION
from facts.gpu import GPU_VM_SIZES, SPOT_TAINT
from facts.kubernetes_syntax import label_value_problem, qualified_name_problem, reserved_label_problem, taint_problem
from facts.vm_sizes import (
    GPU_POOL_MIN_OS_DISK_GIB,
    SYSTEM_POOL_MIN_MEMORY_GIB,
    SYSTEM_POOL_MIN_VCPUS,
    VM_SIZES,
)
from facts.vm_sizes import (
    known_sizes as known_vm_sizes,
)
from planning import addressing, capacity, cluster_traffic, sandbox
from planning import dispatch as dispatch_plan
from planning import egress as egress_plan
from planning import kafka as kafka_plan
from planning import naming as naming_rules
from planning import streaming as streaming_plan
from planning.addressing import NamedRange
from planning.gpu import taint_key
from planning.images import ANONYMOUS_UPSTREAMS, PLATFORM_CACHE_RULES, CacheRule, overlaps
from planning.naming import Naming, storage_account_name
from stackconfig.keys import key
from stackconfig.model import (
    BASIC_PLAN_TABLES,
    GEO_REDUNDANT_STORAGE,
    REQUIRED_TAGS,
    EventHubsConfig,
    FlinkJobConfig,
    KafkaConfig,
    PlatformConfig,
    PoolSettings,
)

# Namespaces AKS and its add-ons own; a team must not claim them.
RESERVED_NAMESPACES = frozenset({"default", "kube-system", "kube-public", "kube-node-lease", "gatekeeper-system"})


def _n(value: int) -> str:
    return f"{value:,}"


@dataclass(frozen=True, order=True)
class ConfigProblem:
    key: str
    reason: str

    def __str__(self) -> str:
        return f"{self.key}: {self.reason}"


def check_tags(config: PlatformConfig) -> Iterator[ConfigProblem]:
    for tag in REQUIRED_TAGS:
        if not config.tags.get(tag):
            yield ConfigProblem(key("tags", tag), "is required on every resource (owner, cost-center)")
    if "environment" in config.tags:
        yield ConfigProblem(key("tags", "environment"), "is set from platform:environment; remove it here")


def check_tag_rules(config: PlatformConfig) -> Iterator[ConfigProblem]:
    """ARM's tag rules, on the platform's tags as every resource gets them (facts/arm_tags.py)."""
    for name, value in config.tags.items():
        for reason in arm_tags.tag_problems(name, value):
            yield ConfigProblem(key("tags", name), reason)
    # The platform adds environment, managed-by and (on cluster resources) cluster.
    total = len(set(config.tags) | {"environment", "managed-by", "cluster"})
    if total > arm_tags.MAX_TAGS_PRIVATE_DNS:
        yield ConfigProblem(
            key("tags"),
            f"{total} tags with the platform's own; private DNS zones and their links take at most "
            f"{arm_tags.MAX_TAGS_PRIVATE_DNS}",
        )


def check_azure_names(config: PlatformConfig) -> Iterator[ConfigProblem]:
    """Regions, zones and Kubernetes versions Azure and AKS actually offer (facts/)."""
    known = ", ".join(sorted(REGIONS))
    for region_name in config.network.regions:
        if region_name not in REGIONS:
            yield ConfigProblem(
                key("network", "regions", region_name), f"{region_name} is not an Azure region (known: {known})"
            )
    for name, cluster in config.clusters.items():
        region = REGIONS.get(cluster.region)
        if region is None:
            yield ConfigProblem(
                key("clusters", name, "region"), f"{cluster.region} is not an Azure region (known: {known})"
            )
        elif not region.zones and cluster.zones:
            yield ConfigProblem(
                key("clusters", name, "zones"),
                f"{cluster.region} has no availability zones; choose a region with zones (the platform spreads pools over zones)",
            )
        version = cluster.kubernetes_version
        if version is not None:
            minor = aks_versions.minor_of(version)
            if minor not in aks_versions.KNOWN_MINORS:
                yield ConfigProblem(key("clusters", name, "kubernetesVersion"), f"AKS never offered Kubernetes {minor}")
            elif minor not in aks_versions.SUPPORTED_MINORS:
                yield ConfigProblem(
                    key("clusters", name, "kubernetesVersion"),
                    f"Kubernetes {minor} is not a minor AKS supports (GA on {aks_versions.TAKEN_ON}: "
                    f"{', '.join(aks_versions.SUPPORTED_MINORS)}; refresh with az aks get-versions and facts/aks_versions.py)",
                )


def _pools_with_kafka(config: PlatformConfig, name: str) -> list[tuple[str, str, PoolSettings]]:
    cluster = config.clusters[name]
    pools: list[tuple[str, str, PoolSettings]] = [
        (pool.key, pool.kind, pool.pool) for pool in capacity.cluster_pools(name, cluster)
    ]
    kafka_pools = kafka_plan.kafka_node_pools(config)
    if name in config.kafka_clusters() and kafka_pools:
        # One pool per zone, all from kafka.strimzi.nodePool: checked once.
        pools.append((key("kafka", "strimzi", "nodePool"), "kafka", next(iter(kafka_pools.values()))))
    if name in config.streaming_clusters():
        for pool in streaming_plan.streaming_node_pools(config).values():
            pools.append((key("streaming", "pool"), "streaming", pool))
    return pools


def check_vm_sizes(config: PlatformConfig) -> Iterator[ConfigProblem]:
    """Every pool's size exists in the catalogue and suits its pool (facts/vm_sizes.py)."""
    for name in config.clusters:
        for pool_key, kind, pool in _pools_with_kafka(config, name):
            size = VM_SIZES.get(pool.vm_size)
            if size is None:
                yield ConfigProblem(
                    f"{pool_key}.vmSize",
                    f"{pool.vm_size} is not a VM size the platform knows; known sizes: {known_vm_sizes()}",
                )
                continue
            if kind != "gpu" and size.gpus:
                yield ConfigProblem(
                    f"{pool_key}.vmSize",
                    f"{pool.vm_size} is a GPU size: declare it under gpuPools, which taints, labels and queues GPU nodes",
                )
            if kind == "system" and (
                size.vcpus < SYSTEM_POOL_MIN_VCPUS or size.memory_gib < SYSTEM_POOL_MIN_MEMORY_GIB or size.burstable
            ):
                yield ConfigProblem(
                    f"{pool_key}.vmSize",
                    f"{pool.vm_size} is too small for an AKS system pool (at least {SYSTEM_POOL_MIN_VCPUS} vCPUs and "
                    f"{SYSTEM_POOL_MIN_MEMORY_GIB} GiB, no B-series)",
                )
            if kind == "kafka" and not size.premium_storage:
                yield ConfigProblem(
                    f"{pool_key}.vmSize", f"{pool.vm_size} takes no Premium SSDs, which Kafka's volumes are"
                )
            if pool.os_disk_type == "Ephemeral":
                room = size.ephemeral_os_disk_gib
                if room == 0:
                    yield ConfigProblem(
                        f"{pool_key}.osDiskType",
                        f"{pool.vm_size} has no temporary or cache disk to hold an ephemeral OS disk; use Managed",
                    )
                elif pool.os_disk_size_gb > room:
                    yield ConfigProblem(
                        f"{pool_key}.osDiskSizeGB",
                        f"{pool.os_disk_size_gb} GB does not fit {pool.vm_size}'s {room} GiB "
                        f"{'cache' if size.cache_gib else 'temporary'} disk, which holds an ephemeral OS disk; "
                        "lower it or use osDiskType Managed",
                    )
            if kind == "gpu" and pool.os_disk_size_gb < GPU_POOL_MIN_OS_DISK_GIB:
                yield ConfigProblem(
                    f"{pool_key}.osDiskSizeGB",
                    f"{pool.os_disk_size_gb} GB is too small for GPU nodes (CUDA images of several GB, the driver "
                    f"container): at least {GPU_POOL_MIN_OS_DISK_GIB}; on a size whose temporary disk is smaller, "
                    "use osDiskType Managed",
                )
            for label, value in pool.labels.items():
                for reason in (
                    reserved_label_problem(label),
                    qualified_name_problem(label),
                    label_value_problem(value),
                ):
                    if reason:
                        yield ConfigProblem(f"{pool_key}.labels", reason)
            for taint in pool.taints:
                reason = taint_problem(taint)
                if reason:
                    yield ConfigProblem(f"{pool_key}.taints", reason)


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
        yield ConfigProblem(subject.key, f"{subject.network} overlaps {other.key} ({other.network})")


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


def _address_problem(use: capacity.AddressUse, cluster: capacity.ClusterCapacity) -> ConfigProblem:
    """Why a range cannot hold the pools it serves at their peak, and what size would."""
    if use.unit == "nodes":  # the overlay pod CIDR: one /24 per node
        return ConfigProblem(
            use.key,
            f"({use.network}) is too small for cluster {cluster.key}: overlay gives each node a "
            f"/24, so it serves {_n(use.available)} nodes but the pools can grow to {_n(use.needed)} "
            f"with surge; use a /{limits.OVERLAY_NODE_PREFIX - max(use.needed - 1, 1).bit_length()} "
            "or larger (it cannot be enlarged after creation)",
        )
    surge = use.peak_nodes - use.max_nodes
    needs = f"needing {_n(use.needed)} pod addresses" if use.key.endswith(".pods") else "one address each"
    return ConfigProblem(
        use.key,
        f"({use.network}) is too small: the pools it serves can grow to {_n(use.peak_nodes)} nodes "
        f"with surge ({_n(use.max_nodes)} max + {_n(surge)} surge), {needs}, but it has "
        f"{_n(use.available)} usable addresses (Azure reserves 5); "
        f"use a /{addressing.smallest_prefix_for(use.needed)} or larger",
    )


def check_cluster_capacity(config: PlatformConfig) -> Iterator[ConfigProblem]:
    """Subnets and the overlay pod CIDR hold every pool at its peak; AKS limits hold."""
    for name, cluster in config.clusters.items():
        plan = capacity.plan_cluster(config, name)
        for use in plan.address_uses:
            if not use.fits:
                yield _address_problem(use, plan)
        for breach in capacity.limit_breaches(plan):
            yield ConfigProblem(breach.key, breach.reason)
        if cluster.cni == "podSubnet" and cluster.subnets.pods is None:
            yield ConfigProblem(key("clusters", name, "subnets", "pods"), "is required when cni is podSubnet")
        if cluster.cni == "overlay" and cluster.subnets.pods is not None:
            yield ConfigProblem(
                key("clusters", name, "subnets", "pods"),
                "is only used with cni: podSubnet; with overlay, pods take network.podCidr",
            )


def check_pools(config: PlatformConfig) -> Iterator[ConfigProblem]:
    for name, cluster in config.clusters.items():
        for pool in capacity.cluster_pools(name, cluster):
            settings = pool.pool
            if settings.min_count > settings.max_count:
                yield ConfigProblem(
                    f"{pool.key}.minCount",
                    f"{settings.min_count} is greater than maxCount {settings.max_count}",
                )
            for zone in settings.zones or []:
                if zone not in cluster.zones:
                    yield ConfigProblem(
                        f"{pool.key}.zones",
                        f"zone {zone} is not one of the cluster's zones ({', '.join(cluster.zones)})",
                    )
        for pool_name in sorted(set(cluster.node_pools) & set(cluster.gpu_pools)):
            yield ConfigProblem(
                key("clusters", name, "gpuPools", pool_name),
                f"{pool_name} is also declared under nodePools; AKS pool names are unique per cluster",
            )
        for section, pools in (("nodePools", cluster.node_pools), ("gpuPools", cluster.gpu_pools)):
            if "system" in pools:
                yield ConfigProblem(
                    key("clusters", name, section, "system"), "the name system belongs to the system pool"
                )


# A GPU pool surging by a percentage needs that share of scarce GPU quota spare at upgrade time.
MAX_GPU_SURGE_PERCENT = 10


def check_gpu_pools(config: PlatformConfig) -> Iterator[ConfigProblem]:
    for name, cluster in config.clusters.items():
        if taint_key(cluster.gpu.taint) == taint_key(SPOT_TAINT):
            yield ConfigProblem(
                key("clusters", name, "gpu", "taint"), "is the Spot taint AKS sets itself; choose a GPU taint"
            )
        for pool_name, pool in cluster.gpu_pools.items():
            pool_key = key("clusters", name, "gpuPools", pool_name)
            size = GPU_VM_SIZES[pool.vm_size]
            if pool.mig_profile and not size.mig:
                yield ConfigProblem(
                    f"{pool_key}.migProfile",
                    f"{pool.vm_size} ({size.gpu_model}) does not support MIG; remove migProfile",
                )
            if pool.mig_profile and cluster.gpu.driver == "operator":
                yield ConfigProblem(
                    f"{pool_key}.migProfile",
                    "AKS partitions MIG with the driver it installs, but gpu.driver is operator; "
                    "use gpu.driver aks on this cluster or remove migProfile",
                )
            zones = pool.zones or cluster.zones
            if size.infiniband and len(zones) > 1:
                yield ConfigProblem(
                    f"{pool_key}.zones",
                    f"{pool.vm_size} nodes talk over InfiniBand, which does not span availability "
                    f"zones; pin the pool to one zone (zones: [\"{zones[0]}\"])",
                )
            if pool.spot and pool.capacity_reservation_group_id:
                yield ConfigProblem(
                    f"{pool_key}.capacityReservationGroupId",
                    "Spot pools cannot draw from a capacity reservation; remove one of the two",
                )
            if pool.max_surge.endswith("%") and int(pool.max_surge[:-1]) > MAX_GPU_SURGE_PERCENT:
                yield ConfigProblem(
                    f"{pool_key}.maxSurge",
                    f"{pool.max_surge} of a GPU pool needs that much spare GPU quota during upgrades; "
                    f'use a node count (e.g. "1") or at most {MAX_GPU_SURGE_PERCENT}%',
                )
            for taint in pool.taints:
                if taint_key(taint) in (taint_key(cluster.gpu.taint), taint_key(SPOT_TAINT)):
                    yield ConfigProblem(
                        f"{pool_key}.taints",
                        f"{taint} is set by the platform (gpu.taint, spot); list only extra taints",
                    )


def check_gpu_quotas(config: PlatformConfig) -> Iterator[ConfigProblem]:
    """Kueue quotas name known teams and never promise more GPUs than a pool can hold."""
    for name in config.clusters:
        plan = capacity.plan_cluster(config, name)
        for pool, promised in capacity.quota_use(plan):
            for team in pool.gpu_pool.quotas:
                if team not in config.teams:
                    yield ConfigProblem(
                        f"{pool.key}.quotas.{team}",
                        f"team {team} is not declared under platform:teams "
                        f"(declared: {', '.join(sorted(config.teams)) or 'none'})",
                    )
            if promised > pool.max_gpu_units:
                unit = "MIG slices" if pool.gpu_pool.mig_profile else "GPUs"
                yield ConfigProblem(
                    f"{pool.key}.quotas",
                    f"the teams' quotas add up to {_n(promised)} {unit}, but the pool holds at most "
                    f"{_n(pool.max_gpu_units)} ({_n(pool.max_nodes)} nodes x {pool.gpu_units_per_node})",
                )


def check_fleet(config: PlatformConfig) -> Iterator[ConfigProblem]:
    if not config.has_fleet:
        if config.fleet is not None:
            yield ConfigProblem(key("fleet"), "applies only to environments of two or more clusters; remove it")
        return
    canaries = config.fleet_settings.canary_clusters
    for i, canary in enumerate(canaries):
        if canary not in config.clusters:
            yield ConfigProblem(
                key("fleet", "canaryClusters", i),
                f"{canary} is not a cluster of this environment ({', '.join(config.clusters)})",
            )
    if set(canaries) >= set(config.clusters):
        yield ConfigProblem(
            key("fleet", "canaryClusters"), "leaves no cluster for the second stage; name fewer canaries"
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
    plan = config.entra.plan_identity
    strimzi = config.kafka is not None and config.kafka.engine == "strimzi"
    if plan is not None and strimzi and plan.tenants_principal_object_id is None:
        yield ConfigProblem(
            key("entra", "planIdentity", "tenantsPrincipalObjectId"),
            "is required with kafka.engine strimzi: previews of the tenants' stack read Kafka's CA "
            "certificates, which its plan identity may read only where the program grants it",
        )


def check_upgrades(config: PlatformConfig) -> Iterator[ConfigProblem]:
    for name, cluster in config.clusters.items():
        version_key = key("clusters", name, "kubernetesVersion")
        channel = config.upgrade_channel(name)
        version = cluster.kubernetes_version
        if config.has_fleet:
            # One upgrade owner: the fleet. kubernetesVersion is only where a new cluster starts.
            if channel != "none":
                yield ConfigProblem(
                    key("clusters", name, "upgrades", "channel"),
                    f"{channel} would upgrade this cluster on its own, but the fleet owns Kubernetes "
                    "upgrades of multi-cluster environments (platform:fleet); remove it",
                )
            continue
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


# Azure rejects a 21st federated identity credential on one managed identity.
MAX_FEDERATED_CREDENTIALS = 20


def check_resource_names(config: PlatformConfig) -> Iterator[ConfigProblem]:
    """Globally named resources must fit Azure's rules before anything is deployed."""
    naming = Naming(config.prefix, config.environment)
    # A Key Vault per region with clusters (decision 0008).
    regions = dict.fromkeys(c.region for c in config.clusters.values())
    for problem in (
        *(naming_rules.key_vault_name_problem(naming.key_vault(region)) for region in regions),
        naming_rules.registry_name_problem(naming.registry()),
    ):
        if problem:
            yield ConfigProblem(key("prefix"), f"{problem}; use a shorter prefix")
    seen: dict[str, str] = {}
    for account_key, account in config.storage.accounts.items():
        name = storage_account_name(config, account_key)
        where = key("storage", "accounts", account_key, *(["accountName"] if account.account_name else []))
        problem = naming_rules.storage_account_name_problem(name)
        if problem:
            hint = "" if account.account_name else " (derived from prefix, environment and key; set accountName)"
            yield ConfigProblem(where, problem + hint)
        elif name in seen:
            yield ConfigProblem(where, f"{name} is already the name of account {seen[name]}")
        seen.setdefault(name, account_key)
        if naming_rules.replica_region(config, account_key) is None:
            continue
        replica = naming_rules.replica_account_name(config, account_key)
        where = key("storage", "accounts", account_key, "replicaAccountName" if account.replica_account_name else "")
        where = where.rstrip(".")
        problem = naming_rules.storage_account_name_problem(replica)
        if problem:
            hint = (
                ""
                if account.replica_account_name
                else " (the account's name and the region's code; set replicaAccountName)"
            )
            yield ConfigProblem(where, f"its replica: {problem}{hint}")
        elif replica in seen:
            yield ConfigProblem(where, f"its replica's name {replica} is already the name of account {seen[replica]}")
        seen.setdefault(replica, account_key)


def check_storage(config: PlatformConfig) -> Iterator[ConfigProblem]:
    storage = config.storage
    restore_days = storage.point_in_time_restore_days
    if restore_days is not None:
        restore_key = key("storage", "pointInTimeRestoreDays")
        if storage.change_feed_days is None:
            yield ConfigProblem(restore_key, "needs the change feed: set platform:storage.changeFeedDays")
        elif storage.change_feed_days <= restore_days:
            yield ConfigProblem(
                restore_key,
                f"{restore_days} days needs a change feed kept longer (changeFeedDays is {storage.change_feed_days})",
            )
        if restore_days >= storage.soft_delete_days:
            yield ConfigProblem(
                restore_key,
                f"must be shorter than softDeleteDays ({storage.soft_delete_days}): Azure restores "
                "from soft-deleted data",
            )
    for account_key, account in storage.accounts.items():
        yield from _replication_problems(config, account_key)
        duplicates = sorted({c for c in account.containers if account.containers.count(c) > 1})
        if duplicates:
            yield ConfigProblem(
                key("storage", "accounts", account_key, "containers"), f"lists {', '.join(duplicates)} twice"
            )
        for prefix in account.delete_after_days:
            container = prefix.split("/", 1)[0]
            if container not in account.containers:
                yield ConfigProblem(
                    key("storage", "accounts", account_key, "deleteAfterDays"),
                    f"{prefix}: {container} is not a container of the account ({', '.join(account.containers)})",
                )


def _replication_problems(config: PlatformConfig, account_key: str) -> Iterator[ConfigProblem]:
    """How an account survives its region: choices Azure would refuse, named by both keys.

    learn.microsoft.com/azure/storage/blobs/object-replication-overview: object replication
    needs versioning and (on the source) the change feed, copies block blobs between
    flat-namespace accounts only, and rules out customer-managed failover on both accounts;
    /azure/storage/common/storage-disaster-recovery-guidance: failover needs a geo-redundant sku.
    """
    storage = config.storage
    account = storage.accounts[account_key]
    where = partial(key, "storage", "accounts", account_key)
    replication = where("replication")
    if account.replication == "objectReplication":
        if account.hierarchical_namespace:
            yield ConfigProblem(
                replication,
                f"object replication does not copy hierarchical-namespace accounts, and "
                f"{where('hierarchicalNamespace')} is true: use geoFailover",
            )
        primary = config.primary_region
        others = [r for r in dict.fromkeys(c.region for c in config.clusters.values()) if r != primary]
        if account.replica_region is None:
            if not others:
                yield ConfigProblem(
                    replication,
                    f"needs a region with clusters besides {primary} for the replica, and platform:clusters has none",
                )
        elif account.replica_region == primary:
            yield ConfigProblem(where("replicaRegion"), f"{primary} is the account's own region")
        elif account.replica_region not in others:
            yield ConfigProblem(
                where("replicaRegion"),
                f"{account.replica_region} has no clusters to read the replica ({', '.join(others) or 'none besides the primary'})",
            )
    else:
        for setting, value in (
            ("replicaRegion", account.replica_region),
            ("replicaAccountName", account.replica_account_name),
        ):
            if value is not None:
                yield ConfigProblem(
                    where(setting), f"applies to objectReplication only, and {replication} is {account.replication}"
                )
    sku = account.sku or storage.sku
    if account.replication == "geoFailover" and config.primary_region not in PAIRED_REGIONS:
        first = next(iter(config.clusters))
        yield ConfigProblem(
            replication,
            f"{config.primary_region} (platform:clusters.{first}.region, where the data lives) has no paired "
            "region to fail over to: use objectReplication",
        )
    elif account.replication == "geoFailover" and sku not in GEO_REDUNDANT_STORAGE:
        sku_key = where("sku") if account.sku else key("storage", "sku")
        yield ConfigProblem(
            replication,
            f"a failover needs a copy in the paired region, and {sku_key} is {sku}: use one of "
            f"{', '.join(GEO_REDUNDANT_STORAGE)}",
        )


def check_workloads(config: PlatformConfig) -> Iterator[ConfigProblem]:
    subjects: dict[tuple[str, str], str] = {}
    for name, workload in config.workloads.items():
        where = partial(key, "workloads", name)

        team = config.teams.get(workload.team)
        if team is None:
            yield ConfigProblem(
                where("team"), f"{workload.team} is not a team of platform:teams ({', '.join(config.teams) or 'none'})"
            )
        elif workload.namespace not in team.namespaces:
            owner = next((t for t, spec in config.teams.items() if workload.namespace in spec.namespaces), None)
            yield ConfigProblem(
                where("namespace"),
                f"{workload.namespace} is not a namespace of team {workload.team}"
                + (f" (it belongs to {owner})" if owner else " (no team declares it)"),
            )
        subject = (workload.namespace, workload.service_account)
        if subject in subjects:
            yield ConfigProblem(
                where("serviceAccount"),
                f"{workload.namespace}/{workload.service_account} is already the service account of "
                f"{subjects[subject]}; one service account carries one identity",
            )
        subjects.setdefault(subject, name)

        clusters = workload.clusters or list(config.clusters)
        for i, cluster in enumerate(workload.clusters or []):
            if cluster not in config.clusters:
                yield ConfigProblem(where("clusters", i), f"{cluster} is not a cluster of platform:clusters")
        for i, cluster in enumerate(workload.failover_clusters):
            if cluster not in config.clusters:
                yield ConfigProblem(where("failoverClusters", i), f"{cluster} is not a cluster of platform:clusters")
            elif cluster in clusters:
                yield ConfigProblem(
                    where("failoverClusters", i),
                    f"{cluster} is already one it runs on (platform:workloads.{name}.clusters, unset: every cluster)",
                )
        trusted = set(clusters) | set(workload.failover_clusters)
        if len(trusted) > MAX_FEDERATED_CREDENTIALS:
            yield ConfigProblem(
                where("clusters"),
                f"{len(trusted)} clusters need one federated credential each, but Azure allows "
                f"{MAX_FEDERATED_CREDENTIALS} per identity: split the workload",
            )

        for account_key, grants in workload.storage.items():
            account = config.storage.accounts.get(account_key)
            if account is None:
                yield ConfigProblem(
                    where("storage", account_key),
                    f"{account_key} is not a storage account of platform:storage.accounts "
                    f"({', '.join(config.storage.accounts) or 'none'})",
                )
                continue
            for container in grants:
                if container not in account.containers:
                    yield ConfigProblem(
                        where("storage", account_key, container),
                        f"{container} is not a container of storage account {account_key} "
                        f"({', '.join(account.containers)})",
                    )


def check_kafka(config: PlatformConfig) -> Iterator[ConfigProblem]:
    """The topic and client spec, and the engine's limits. Keys name the topic by position
    (`platform:kafka.topics[2].partitions`), as the stack file lists them."""
    kafka = config.kafka
    if kafka is None:
        return
    other_engine = {"strimzi": ("eventHubs", kafka.event_hubs), "eventhubs": ("strimzi", kafka.strimzi)}
    section, value = other_engine[kafka.engine]
    if value is not None:
        yield ConfigProblem(key("kafka", section), f"belongs to the other engine; engine is {kafka.engine}")
    if kafka.engine == "strimzi" and kafka.strimzi is None:
        yield ConfigProblem(key("kafka", "strimzi"), "is required with engine strimzi (at least oauth.audience)")

    hosts, mirrors = config.kafka_clusters(), kafka_plan.mirror_clusters(config)
    seen: set[str] = set()
    for i, topic in enumerate(kafka.topics):
        where = partial(key, "kafka", "topics", i)

        if topic.name in seen:
            yield ConfigProblem(where("name"), f"{topic.name} is declared twice")
        seen.add(topic.name)
        copy_of = next((c for c in mirrors if topic.name.startswith(f"{c}.")), None)
        if copy_of:
            yield ConfigProblem(
                where("name"), f"names starting with {copy_of}. are MirrorMaker's copies of cluster {copy_of}'s topics"
            )
        if topic.min_in_sync_replicas > topic.replication_factor:
            yield ConfigProblem(
                where("minInSyncReplicas"),
                f"{topic.min_in_sync_replicas} is more than the topic's {topic.replication_factor} replicas: "
                "no write with acks=all could ever succeed",
            )
        if config.strimzi and topic.replication_factor > config.strimzi.brokers:
            yield ConfigProblem(
                where("replicationFactor"),
                f"{topic.replication_factor} replicas need as many brokers; platform:kafka.strimzi.brokers "
                f"is {config.strimzi.brokers}",
            )
    if kafka.engine == "eventhubs":
        yield from _event_hubs_limits(kafka)

    for client, spec in kafka.clients.items():
        if client not in config.workloads:
            yield ConfigProblem(
                key("kafka", "clients", client),
                f"{client} is not a workload of platform:workloads ({', '.join(config.workloads) or 'none'}); "
                "clients sign in with a workload's identity",
            )
        elif kafka.engine == "strimzi":
            elsewhere = [c for c in config.identity_clusters(client) if c not in hosts]
            if elsewhere:
                yield ConfigProblem(
                    key("kafka", "clients", client),
                    f"runs on {', '.join(elsewhere)}, which host no Kafka (platform:kafka.strimzi.clusters)",
                )
        for topic_name in spec.topics:
            if kafka.topic(topic_name) is None:
                yield ConfigProblem(
                    key("kafka", "clients", client, "topics", topic_name),
                    f"{topic_name} is not a topic of platform:kafka.topics ({', '.join(t.name for t in kafka.topics) or 'none'})",
                )
        if spec.authentication == "tls" and kafka.engine == "eventhubs":
            yield ConfigProblem(
                key("kafka", "clients", client, "authentication"),
                "Event Hubs takes Entra ID (oauth) only; client certificates need engine strimzi",
            )

    if config.strimzi is not None:
        for team, team_spec in config.teams.items():
            if kafka_plan.KAFKA_NAMESPACE in team_spec.namespaces:
                yield ConfigProblem(
                    key("teams", team, "namespaces", team_spec.namespaces.index(kafka_plan.KAFKA_NAMESPACE)),
                    f"{kafka_plan.KAFKA_NAMESPACE} is where the platform runs Kafka (platform:kafka)",
                )
        if mirrors and kafka_plan.MIRROR_WORKLOAD in config.workloads:
            yield ConfigProblem(
                key("workloads", kafka_plan.MIRROR_WORKLOAD),
                "is the name of MirrorMaker's own identity; rename the workload",
            )
        for i, cluster in enumerate(config.strimzi.clusters or []):
            if cluster not in config.clusters:
                yield ConfigProblem(
                    key("kafka", "strimzi", "clusters", i), f"{cluster} is not a cluster of platform:clusters"
                )
        for cluster in hosts:
            host = config.clusters[cluster]
            if sorted(host.zones) != kafka_plan.KAFKA_ZONES:
                yield ConfigProblem(
                    key("clusters", cluster, "zones"),
                    "hosts Kafka, whose brokers and controllers spread over zones 1, 2 and 3",
                )
            for field, pools in (("nodePools", host.node_pools), ("gpuPools", host.gpu_pools)):
                for pool_name in kafka_plan.kafka_node_pools(config):
                    if pool_name in pools:
                        yield ConfigProblem(
                            key("clusters", cluster, field, pool_name),
                            "is the name of a Kafka pool this cluster gets as a Kafka host",
                        )
        if len(mirrors) > MAX_FEDERATED_CREDENTIALS:
            yield ConfigProblem(
                key("kafka", "strimzi", "clusters"),
                f"MirrorMaker's identity needs a federated credential in each of the {len(mirrors)} Kafka "
                f"clusters, but Azure allows {MAX_FEDERATED_CREDENTIALS} per identity",
            )


def _event_hubs_limits(kafka: KafkaConfig) -> Iterator[ConfigProblem]:
    settings = kafka.event_hubs or EventHubsConfig()
    tier = EVENT_HUBS_TIERS[settings.sku]
    sku = f"Event Hubs {settings.sku}"
    if settings.capacity not in tier.capacities:
        yield ConfigProblem(
            key("kafka", "eventHubs", "capacity"),
            f"{settings.capacity} is not a capacity of {sku} ({', '.join(map(str, tier.capacities[:5]))}"
            f"{'...' if len(tier.capacities) > 5 else ''})",
        )
    if len(kafka.topics) > tier.event_hubs_per_namespace:
        yield ConfigProblem(
            key("kafka", "topics"),
            f"{len(kafka.topics)} topics, but {sku} holds {tier.event_hubs_per_namespace} event hubs per namespace",
        )
    total_partitions = sum(topic.partitions for topic in kafka.topics)
    if tier.partitions_per_capacity_unit and total_partitions > tier.partitions_per_capacity_unit * settings.capacity:
        yield ConfigProblem(
            key("kafka", "topics"),
            f"{total_partitions} partitions in all, but {sku} allows {tier.partitions_per_capacity_unit} per "
            f"processing unit ({settings.capacity}); raise platform:kafka.eventHubs.capacity",
        )
    for i, topic in enumerate(kafka.topics):
        if topic.partitions > tier.partitions_per_event_hub:
            yield ConfigProblem(
                key("kafka", "topics", i, "partitions"),
                f"{topic.partitions} is over {sku}'s {tier.partitions_per_event_hub} partitions per event hub",
            )
        if topic.retention_hours > tier.max_retention_hours:
            yield ConfigProblem(
                key("kafka", "topics", i, "retentionHours"),
                f"{topic.retention_hours} is over {sku}'s {tier.max_retention_hours}-hour retention",
            )
        groups = len(kafka_plan.readers(kafka, topic.name)) + 1
        if groups > tier.consumer_groups_per_event_hub:
            yield ConfigProblem(
                key("kafka", "topics", i),
                f"{groups - 1} reading clients need {groups} consumer groups with $Default; {sku} allows "
                f"{tier.consumer_groups_per_event_hub} per event hub",
            )


def check_registry(config: PlatformConfig) -> Iterator[ConfigProblem]:
    """Team cache rules must be creatable next to the platform's own and each other."""
    taken = [(f"the platform's rule {rule.name}", rule) for rule in PLATFORM_CACHE_RULES]
    for name, rule in config.registry.cache_rules.items():
        where = key("registry", "cacheRules", name)
        host = rule.source.split("/", 1)[0]
        if host not in ANONYMOUS_UPSTREAMS:
            yield ConfigProblem(
                where + ".source",
                f"{host} is not an upstream the registry can pull from without credentials "
                f"({', '.join(ANONYMOUS_UPSTREAMS)})",
            )
        if rule.source.endswith("/*") != rule.target.endswith("/*"):
            yield ConfigProblem(where, "source and target must both end in /* or neither")
        for owner, other in taken:
            if other.name == name:
                yield ConfigProblem(where, f"{name} is the name of {owner}")
            elif rule.source.endswith("/*") and other.source.endswith("/*") and overlaps(rule.source, other.source):
                yield ConfigProblem(where + ".source", f"{rule.source} overlaps {owner} ({other.source})")
            elif overlaps(rule.target, other.target):
                yield ConfigProblem(where + ".target", f"{rule.target} overlaps {owner} ({other.target})")
        taken.append((f"rule {name}", CacheRule(name, rule.source, rule.target)))


def check_key_vault_grants(config: PlatformConfig) -> Iterator[ConfigProblem]:
    for name, workload in config.workloads.items():
        secrets = workload.key_vault_secrets
        duplicates = sorted({secret for secret in secrets if secrets.count(secret) > 1})
        if duplicates:
            yield ConfigProblem(key("workloads", name, "keyVaultSecrets"), f"lists {', '.join(duplicates)} twice")


# Memory-optimized: Azure's E-series give 8 GiB per vCPU (RocksDB's block cache and write buffers
# live off-heap, in the TaskManager's managed memory).
STREAMING_MIN_GIB_PER_VCPU = 8


def check_streaming(config: PlatformConfig) -> Iterator[ConfigProblem]:
    """Where Flink runs, which teams' namespaces host it, and what each job needs
    (docs/decisions/0007-streaming.md)."""
    streaming = config.streaming
    for team, spec in config.teams.items():
        for namespace in spec.streaming_namespaces:
            where = key("teams", team, "streamingNamespaces")
            if streaming is None:
                yield ConfigProblem(where, f"{namespace}: there is no platform:streaming in this environment")
            if namespace not in spec.namespaces:
                yield ConfigProblem(where, f"{namespace} is not one of the team's namespaces")
            if namespace in spec.training_namespaces or namespace in spec.high_risk_namespaces:
                yield ConfigProblem(
                    where,
                    f"{namespace} is a training or high-risk namespace; Flink jobs run in their own namespace "
                    "(Pod Security restricted, outside Kueue)",
                )
    if streaming is None:
        return
    for cluster in streaming.clusters or []:
        if cluster not in config.clusters:
            yield ConfigProblem(
                key("streaming", "clusters"),
                f"{cluster} is not a cluster of platform:clusters ({', '.join(config.clusters)})",
            )
    if not streaming.high_availability and config.environment in streaming_plan.HIGH_AVAILABILITY_REQUIRED:
        yield ConfigProblem(
            key("streaming", "highAvailability"),
            f"is required in {' and '.join(streaming_plan.HIGH_AVAILABILITY_REQUIRED)}: without it a JobManager's "
            "failure stops every job until the operator restarts it from its last checkpoint",
        )
    size = VM_SIZES.get(streaming.pool.vm_size)
    if size is not None and (size.temp_disk_gib == 0 or size.memory_gib < STREAMING_MIN_GIB_PER_VCPU * size.vcpus):
        yield ConfigProblem(
            key("streaming", "pool", "vmSize"),
            f"{size.name} is not memory-optimized with a temporary disk (at least {STREAMING_MIN_GIB_PER_VCPU} GiB "
            "per vCPU, and a local disk for RocksDB's working files), e.g. Standard_E8ds_v5",
        )
    if streaming.jobs and streaming_plan.CHECKPOINT_ACCOUNT in config.storage.accounts:
        yield ConfigProblem(
            key("storage", "accounts", streaming_plan.CHECKPOINT_ACCOUNT),
            "is the Flink jobs' checkpoint account (platform:streaming.checkpoints); use another key",
        )
    if streaming.pool.min_count > streaming.pool.max_count:
        yield ConfigProblem(key("streaming", "pool", "minCount"), "is greater than maxCount")
    for name, job in streaming.jobs.items():
        yield from _job_problems(config, name, job)
    if size is not None:
        yield from _streaming_capacity(config)


def _job_problems(config: PlatformConfig, name: str, job: FlinkJobConfig) -> Iterator[ConfigProblem]:
    streaming = config.streaming
    assert streaming is not None
    where = partial(key, "streaming", "jobs", name)
    if name in config.workloads:
        yield ConfigProblem(
            where(),
            "is also a workload of platform:workloads; a job is a workload of its own (its identity, its "
            "service account): rename one",
        )
    team = config.teams.get(job.team)
    if team is None:
        yield ConfigProblem(
            where("team"), f"{job.team} is not a team of platform:teams ({', '.join(config.teams) or 'none'})"
        )
    elif job.namespace not in team.streaming_namespaces:
        yield ConfigProblem(
            where("namespace"),
            f"{job.namespace} is not one of {job.team}'s streamingNamespaces "
            f"({', '.join(team.streaming_namespaces) or 'none'})",
        )
    for cluster in job.clusters or []:
        if cluster not in config.streaming_clusters():
            yield ConfigProblem(
                where("clusters"),
                f"{cluster} has no streaming pool or operator: not one of platform:streaming.clusters "
                f"({', '.join(config.streaming_clusters()) or 'none'})",
            )
    crd_version = streaming_plan.flink_crd_version(job.flink_version)
    if crd_version not in OPERATOR_FLINK_VERSIONS:
        yield ConfigProblem(
            where("flinkVersion"),
            f"{job.flink_version} is not a Flink version the pinned operator {OPERATOR_VERSION} knows "
            f"({', '.join(v[1:].replace('_', '.') for v in OPERATOR_FLINK_VERSIONS)})",
        )
    elif crd_version != FLINK_CRD_VERSION:
        yield ConfigProblem(
            where("flinkVersion"),
            f"{job.flink_version}: the platform's Flink base image (images/flink/) is {FLINK_VERSION}; build the "
            f"job on it and declare {FLINK_CRD_VERSION[1:].replace('_', '.')}",
        )
    if job.image.endswith(":latest"):
        yield ConfigProblem(where("image"), "names `latest`; pin a tag or a digest, so that an upgrade is a change")
    if job.topics and config.kafka is None:
        yield ConfigProblem(where("topics"), "there is no platform:kafka in this environment")
    elif config.kafka is not None:
        known = [topic.name for topic in config.kafka.topics]
        for topic in job.topics:
            if topic not in known:
                yield ConfigProblem(
                    where("topics", topic), f"is not a topic of platform:kafka.topics ({', '.join(known) or 'none'})"
                )
    # The FlinkDeployment the job becomes, against the operator's own rules and the platform's
    # list of current Flink options (the identity's IDs change nothing these check).
    manifest = streaming_plan.flink_deployment(
        streaming_plan.job_spec(
            config, name, login_server="registry", account_name="account", client_id="id", tenant_id="tenant"
        )
    )
    for reason in streaming_plan.job_problems(manifest):
        yield ConfigProblem(where(), f"its FlinkDeployment: {reason}")
    if job.savepoint_retention_days > streaming.checkpoints.savepoint_retention_days:
        yield ConfigProblem(
            where("savepointRetentionDays"),
            f"{job.savepoint_retention_days} days is longer than the checkpoint storage keeps savepoints "
            f"(platform:streaming.checkpoints.savepointRetentionDays, {streaming.checkpoints.savepoint_retention_days})",
        )


def _streaming_capacity(config: PlatformConfig) -> Iterator[ConfigProblem]:
    """Each job, and every job of a cluster together, fit the `flink` pool at its maximum."""
    streaming = config.streaming
    assert streaming is not None
    room = streaming_plan.pool_node_room(config)
    pool = streaming.pool
    room_text = (
        f"{pool.vm_size} ({room[0] / 1000:g} CPUs, {room[1]:,} MiB and {room[2]} GiB of its {pool.os_disk_size_gb} GB "
        "OS disk free for pods per node)"
    )
    fits = {}
    for name, job in streaming.jobs.items():
        pods = streaming_plan.job_pods(config, name, job)
        nodes = streaming_plan.nodes_needed(pods, room)
        fits[name] = nodes is not None and nodes <= pool.max_count
        if nodes is None:
            yield ConfigProblem(
                key("streaming", "jobs", name), f"a JobManager or TaskManager does not fit a node of {room_text}"
            )
        elif nodes > pool.max_count:
            yield ConfigProblem(
                key("streaming", "jobs", name, "parallelism"),
                f"{job.parallelism} needs {streaming_plan.task_managers(job)} TaskManagers of {job.task_manager.slots} "
                f"slots (and {streaming_plan.job_manager_replicas(config)} JobManagers): {nodes} nodes of {room_text}; "
                f"platform:streaming.pool.maxCount is {pool.max_count}",
            )
    for cluster in config.streaming_clusters():
        jobs = [n for n in streaming.jobs if cluster in config.job_clusters(n) and fits.get(n)]
        pods = [p for n in jobs for p in streaming_plan.job_pods(config, n, streaming.jobs[n])]
        nodes = streaming_plan.nodes_needed(pods, room)
        if len(jobs) > 1 and nodes is not None and nodes > pool.max_count:
            yield ConfigProblem(
                key("streaming", "pool", "maxCount"),
                f"{pool.max_count} nodes of {room_text} do not hold the jobs of cluster {cluster} together "
                f"({', '.join(jobs)}: {nodes} nodes)",
            )


def check_alerts(config: PlatformConfig) -> Iterator[ConfigProblem]:
    """Routes name receivers that exist; a receiver reaches someone."""
    alerts = config.operations.alerts
    for name, receiver in alerts.receivers.items():
        if not receiver.emails and not receiver.webhooks:
            yield ConfigProblem(
                key("operations", "alerts", "receivers", name), "reaches nobody: give it emails or webhooks"
            )
    for severity, routed in alerts.routes.items():
        for i, target in enumerate(routed):
            if target not in alerts.receivers:
                yield ConfigProblem(
                    key("operations", "alerts", "routes", severity, i),
                    f"{target} is not a receiver of platform:operations.alerts.receivers "
                    f"({', '.join(alerts.receivers) or 'none'})",
                )


GRAFANA_NAME_MAX = 23


def check_monitoring(config: PlatformConfig) -> Iterator[ConfigProblem]:
    """Table plans the tables support; a namespace filter that names namespaces; one private
    link scope per DNS: the hub's when its shared zones serve the environment."""
    logs = config.operations.container_logs
    for table, settings in logs.tables.items():
        where = ("operations", "containerLogs", "tables", table)
        if settings.plan == "Basic" and table not in BASIC_PLAN_TABLES:
            yield ConfigProblem(
                key(*where, "plan"),
                f"{table} cannot use the Basic plan (of Container Insights' tables only {', '.join(BASIC_PLAN_TABLES)} can)",
            )
        if settings.plan == "Basic" and settings.retention_days is not None:
            yield ConfigProblem(
                key(*where, "retentionDays"),
                "a Basic table keeps 30 days interactive; set totalRetentionDays for longer",
            )
        interactive = settings.retention_days or (
            30 if settings.plan == "Basic" else config.operations.log_retention_days
        )
        if settings.total_retention_days is not None and settings.total_retention_days < interactive:
            yield ConfigProblem(
                key(*where, "totalRetentionDays"),
                f"{settings.total_retention_days} is shorter than the table's interactive retention ({interactive} days)",
            )
    if (logs.namespace_filtering_mode == "Off") != (not logs.namespaces):
        yield ConfigProblem(
            key("operations", "containerLogs", "namespaces"),
            "name namespaces exactly when namespaceFilteringMode is Exclude",
        )
    # Managed Grafana names: 2-23 letters, digits and hyphens (Microsoft.Dashboard/grafana).
    grafana_name = f"grafana-{config.prefix}-{config.environment}"
    if config.operations.grafana.enabled and len(grafana_name) > GRAFANA_NAME_MAX:
        yield ConfigProblem(
            key("operations", "grafana", "enabled"),
            f"the instance's name {grafana_name!r} is longer than Managed Grafana's {GRAFANA_NAME_MAX} characters: "
            "shorten platform:prefix or the environment's name",
        )
    scope = config.operations.private_link_scope
    shared_zones = config.network.hub is not None and config.network.hub.private_dns_zones_resource_group_id
    if scope.enabled and shared_zones and not scope.scope_id:
        yield ConfigProblem(
            key("operations", "privateLinkScope", "scopeId"),
            "the hub's shared zones serve this environment, and a VNet uses one Azure Monitor private link scope "
            "per DNS: name the hub's scope (or set enabled: false)",
        )
    hub = config.network.hub
    if hub is not None and hub.create_hub_side_peering and hub.private_dns_zones_resource_group_id:
        yield ConfigProblem(
            key("network", "hub", "createHubSidePeering"),
            "the hub's shared zones say it serves several environments, and such a hub is written by its owner "
            "alone (one environment could change another's peering): leave it false and hand the hub its half "
            "(stack output hubRequests)",
        )
    if scope.scope_id and not shared_zones:
        yield ConfigProblem(
            key("operations", "privateLinkScope", "scopeId"),
            "a hub's scope needs the hub's zones (network.hub.privateDnsZonesResourceGroupId); with the "
            "environment's own zones, leave it unset and the environment creates its own",
        )


# MultiKueueConfig: 1-20 clusters (kueue v0.19.2, apis/kueue/v1beta2/multikueue_types.go).
MAX_MULTIKUEUE_WORKERS = 20


def check_jobs(config: PlatformConfig) -> Iterator[ConfigProblem]:
    """MultiKueue: dispatchers are dispatch clusters and nothing else runs on them; workers are
    GPU clusters whose API servers the dispatchers reach in the workers' VNets."""
    jobs = config.jobs
    for i, name in enumerate(jobs.dispatchers):
        where = key("jobs", "dispatchers", i)
        if name not in config.clusters:
            yield ConfigProblem(where, f"{name} is not a cluster of platform:clusters")
        elif config.clusters[name].role != "dispatch":
            yield ConfigProblem(
                where,
                f"{name} runs workloads (platform:clusters.{name}.role); Kueue's manager cannot be its own "
                "worker, so a dispatcher is a cluster of its own with role dispatch",
            )
    for name, cluster in config.clusters.items():
        if cluster.role != "dispatch":
            continue
        if name not in jobs.dispatchers:
            yield ConfigProblem(
                key("clusters", name, "role"), "is dispatch, but the cluster is not in platform:jobs.dispatchers"
            )
        for pools, present in (
            ("nodePools", cluster.node_pools),
            ("gpuPools", cluster.gpu_pools),
            ("sandboxPool", cluster.sandbox_pool),
        ):
            if present:
                yield ConfigProblem(
                    key("clusters", name, pools),
                    f"a dispatch cluster runs no workloads (platform:clusters.{name}.role is dispatch): remove it",
                )
    dispatchers = set(jobs.dispatchers)
    named = [
        *(
            key("kafka", "strimzi", "clusters", i)
            for i, c in enumerate((config.strimzi.clusters or []) if config.strimzi else [])
            if c in dispatchers
        ),
        *(
            key("streaming", "clusters", i)
            for i, c in enumerate((config.streaming.clusters or []) if config.streaming else [])
            if c in dispatchers
        ),
    ]
    for workload, spec in config.workloads.items():
        for field_name, values in (("clusters", spec.clusters or []), ("failoverClusters", spec.failover_clusters)):
            named += [key("workloads", workload, field_name, i) for i, c in enumerate(values) if c in dispatchers]
    for where in named:
        yield ConfigProblem(where, "names a dispatch cluster, which runs no workloads (platform:jobs.dispatchers)")
    if jobs.workers is not None and not jobs.dispatchers:
        yield ConfigProblem(key("jobs", "workers"), "applies only with platform:jobs.dispatchers")
    if not jobs.dispatchers:
        return
    for i, name in enumerate(jobs.workers or []):
        where = key("jobs", "workers", i)
        if name not in config.clusters:
            yield ConfigProblem(where, f"{name} is not a cluster of platform:clusters")
        elif config.clusters[name].role != "workloads" or not config.clusters[name].gpu_pools:
            yield ConfigProblem(where, f"{name} has no GPU pools to run the dispatched jobs on")
    if jobs.worker_role_id is None:
        yield ConfigProblem(
            key("jobs", "workerRoleId"),
            "is required with dispatchers: the custom role \"Platform MultiKueue worker\" scripts/bootstrap prints, "
            "which the dispatchers' identity gets on the workers' team job namespaces",
        )
    if dispatch_plan.DISPATCH_WORKLOAD in config.workloads:
        yield ConfigProblem(
            key("workloads", dispatch_plan.DISPATCH_WORKLOAD),
            "is the name of the MultiKueue dispatchers' own identity; rename the workload",
        )
    workers = config.dispatch_workers()
    if not workers:
        yield ConfigProblem(key("jobs", "dispatchers"), "there is no worker: no workloads cluster has GPU pools")
    elif len(workers) > MAX_MULTIKUEUE_WORKERS:
        yield ConfigProblem(
            key("jobs", "workers"), f"{len(workers)} workers; a MultiKueueConfig holds at most {MAX_MULTIKUEUE_WORKERS}"
        )
    for name in workers:
        api = config.clusters[name].api_server
        if not (api.private and api.vnet_integration):
            yield ConfigProblem(
                key("clusters", name, "apiServer", "vnetIntegration" if api.private else "private"),
                "a MultiKueue worker's API server must be private and VNet-integrated: the dispatchers reach it "
                "in its subnet, across the regions' peering (platform:jobs)",
            )


CHECKS = (
    check_tag_rules,
    check_azure_names,
    check_vm_sizes,
    check_tags,
    check_regions,
    check_address_overlaps,
    check_subnets,
    check_service_network,
    check_pools,
    check_cluster_capacity,
    check_gpu_pools,
    check_gpu_quotas,
    check_fleet,
    check_egress,
    check_isolation,
    check_api_servers,
    check_identity,
    check_upgrades,
    check_teams,
    check_resource_names,
    check_storage,
    check_workloads,
    check_registry,
    check_key_vault_grants,
    check_kafka,
    check_jobs,
    check_alerts,
    check_monitoring,
)


def find_problems(config: PlatformConfig) -> list[ConfigProblem]:
    """Every cross-field problem of a schema-valid config, sorted by key.

    Flink jobs are checked as written, then (if they are sound) as what they expand into,
    workloads, Kafka clients and a checkpoint account (planning.streaming.expand), so that the
    identity, Kafka, storage and isolation rules hold for them too; those problems name the job."""
    problems = set(check_streaming(config))
    if problems or config.streaming is None:
        return sorted(problems | {problem for check in CHECKS for problem in check(config)})
    expanded = streaming_plan.expand(config)
    return sorted(
        {
            ConfigProblem(
                streaming_plan.derived_key(config, problem.key),
                # Keys the reason names too: `platform:storage.accounts.flink.sku` is the job's checkpoints' sku.
                re.sub(
                    r"platform:[\w.\[\]-]+", lambda m: streaming_plan.derived_key(config, m.group(0)), problem.reason
                ),
            )
            for check in CHECKS
            for problem in check(expanded)
        }
    )
