"""Node pools, VM sizes, GPU pools and quotas, cluster capacity, fleets and upgrades."""

from __future__ import annotations

import difflib
from collections.abc import Iterator

from facts import aks_limits as limits
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
from planning import addressing, capacity
from planning import kafka as kafka_plan
from planning import streaming as streaming_plan
from planning.gpu import taint_key
from planning.queues import MORE_QUOTA
from stackconfig.keys import key
from stackconfig.model import (
    PlatformConfig,
    PoolSettings,
)
from validation.checks.common import ConfigProblem, _n


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
                    nearest = difflib.get_close_matches(team, list(config.teams), n=1)
                    yield ConfigProblem(
                        f"{pool.key}.quotas.{team}",
                        (f"did you mean {nearest[0]}? " if nearest else "")
                        + f"team {team} is not declared under platform:teams "
                        f"(declared: {', '.join(sorted(config.teams)) or 'none'})",
                    )
            if promised > pool.max_gpu_units:
                unit = "MIG slices" if pool.gpu_pool.mig_profile else "GPUs"
                yield ConfigProblem(
                    f"{pool.key}.quotas",
                    f"the teams' quotas add up to {_n(promised)} {unit}, but the pool holds at most "
                    f"{_n(pool.max_gpu_units)} ({_n(pool.max_nodes)} nodes x {pool.gpu_units_per_node}); more for a "
                    f"team takes {MORE_QUOTA}",
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
