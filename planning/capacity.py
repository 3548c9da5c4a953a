"""The capacity plan of an environment: what each cluster can grow to, and what that costs in
addresses, against AKS's limits.

Pure functions over the validated config (no Pulumi). `validation.checks` turns every
limit this plan exceeds into a config problem naming the key; `make capacity` prints it.

A pool's *peak* is its max count plus the surge nodes an upgrade adds while it is fully
scaled out; subnets and the overlay pod CIDR must hold the peak, not just the max.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from ipaddress import IPv4Network
from typing import Literal

from facts import aks_limits as limits
from facts.gpu import GPU_VM_SIZES, gpu_units_per_node
from planning import addressing
from planning import kafka as kafka_plan
from planning import streaming as streaming_plan
from planning.sandbox import SANDBOX_POOL_NAME
from stackconfig.keys import key as config_key
from stackconfig.model import ClusterConfig, GpuPoolConfig, PlatformConfig, PoolSettings

PoolKind = Literal["system", "cpu", "gpu", "kafka", "streaming"]


@dataclass(frozen=True)
class PoolCapacity:
    """One node pool at its largest."""

    key: str  # where the pool is declared, e.g. platform:clusters.eus2.gpuPools.h100
    cluster: str
    name: str
    kind: PoolKind
    pool: PoolSettings

    @property
    def max_nodes(self) -> int:
        return self.pool.max_count

    @property
    def surge_nodes(self) -> int:
        return addressing.surge_nodes(self.pool.max_count, self.pool.max_surge)

    @property
    def peak_nodes(self) -> int:
        """Nodes the pool can reach during an upgrade of a fully scaled-out pool."""
        return self.max_nodes + self.surge_nodes

    @property
    def max_pods(self) -> int:
        return self.max_nodes * self.pool.max_pods

    @property
    def gpu_pool(self) -> GpuPoolConfig:
        """The pool's settings as a GPU pool (only GPU pools carry quotas and MIG profiles)."""
        if not isinstance(self.pool, GpuPoolConfig):
            raise TypeError(f"{self.key} is not a GPU pool")
        return self.pool

    @property
    def gpu_model(self) -> str | None:
        return GPU_VM_SIZES[self.pool.vm_size].gpu_model if isinstance(self.pool, GpuPoolConfig) else None

    @property
    def gpus_per_node(self) -> int:
        """Physical GPUs per node."""
        return GPU_VM_SIZES[self.pool.vm_size].gpus if isinstance(self.pool, GpuPoolConfig) else 0

    @property
    def gpu_units_per_node(self) -> int:
        """Schedulable `nvidia.com/gpu` per node: GPUs, or MIG slices."""
        if not isinstance(self.pool, GpuPoolConfig):
            return 0
        return gpu_units_per_node(GPU_VM_SIZES[self.pool.vm_size], self.pool.mig_profile)

    @property
    def max_gpus(self) -> int:
        return self.max_nodes * self.gpus_per_node

    @property
    def max_gpu_units(self) -> int:
        return self.max_nodes * self.gpu_units_per_node


@dataclass(frozen=True)
class AddressUse:
    """How much of an address range the pools need at their peak."""

    key: str
    network: IPv4Network
    unit: str  # "addresses" or "nodes" (overlay: one /24 per node)
    needed: int
    available: int
    max_nodes: int  # of the pools this range serves
    peak_nodes: int  # the same pools with upgrade surge

    @property
    def headroom(self) -> int:
        return self.available - self.needed

    @property
    def fits(self) -> bool:
        return self.needed <= self.available


@dataclass(frozen=True)
class ClusterCapacity:
    key: str
    pools: list[PoolCapacity]
    address_uses: list[AddressUse]

    @property
    def max_nodes(self) -> int:
        return sum(p.max_nodes for p in self.pools)

    @property
    def peak_nodes(self) -> int:
        return sum(p.peak_nodes for p in self.pools)

    @property
    def max_pods(self) -> int:
        return sum(p.max_pods for p in self.pools)

    @property
    def gpu_pools(self) -> list[PoolCapacity]:
        return [p for p in self.pools if p.kind == "gpu"]

    @property
    def gpus_by_model(self) -> Counter[str]:
        return Counter({m: n for m, n in _sum_by_model(self.gpu_pools, "max_gpus").items() if n})

    @property
    def gpu_units_by_model(self) -> Counter[str]:
        return Counter({m: n for m, n in _sum_by_model(self.gpu_pools, "max_gpu_units").items() if n})


def _sum_by_model(pools: list[PoolCapacity], attribute: str) -> Counter[str]:
    totals: Counter[str] = Counter()
    for pool in pools:
        totals[pool.gpu_model or ""] += getattr(pool, attribute)
    return totals


@dataclass(frozen=True)
class CapacityPlan:
    clusters: list[ClusterCapacity] = field(default_factory=list)

    @property
    def max_nodes(self) -> int:
        return sum(c.max_nodes for c in self.clusters)

    @property
    def gpus_by_model(self) -> Counter[str]:
        return sum((c.gpus_by_model for c in self.clusters), Counter())

    @property
    def gpu_nodes(self) -> int:
        return sum(p.max_nodes for c in self.clusters for p in c.gpu_pools)

    def summary(self) -> str:
        """One line for the preview: `clusters 2 · max nodes 7,612 · GPUs 60,800 H100`."""
        gpus = ", ".join(f"{n:,} {model}" for model, n in sorted(self.gpus_by_model.items()))
        parts = [
            f"clusters {len(self.clusters)}",
            f"max nodes {self.max_nodes:,}",
            f"GPU nodes {self.gpu_nodes:,}",
            f"GPUs {gpus or 'none'}",
        ]
        return " · ".join(parts)


def cluster_pools(name: str, cluster: ClusterConfig) -> list[PoolCapacity]:
    """Every pool of a cluster, the system pool first."""
    pools = [PoolCapacity(config_key("clusters", name, "systemPool"), name, "system", "system", cluster.system_pool)]
    pools += [
        PoolCapacity(config_key("clusters", name, "nodePools", pool_name), name, pool_name, "cpu", pool)
        for pool_name, pool in cluster.node_pools.items()
    ]
    pools += [
        PoolCapacity(config_key("clusters", name, "gpuPools", pool_name), name, pool_name, "gpu", pool)
        for pool_name, pool in cluster.gpu_pools.items()
    ]
    if cluster.sandbox_pool is not None:
        pools.append(
            PoolCapacity(
                config_key("clusters", name, "sandboxPool"), name, SANDBOX_POOL_NAME, "cpu", cluster.sandbox_pool
            )
        )
    return pools


def _address_uses(config: PlatformConfig, name: str, pools: list[PoolCapacity]) -> list[AddressUse]:
    cluster = config.clusters[name]
    system = [p for p in pools if p.kind == "system"]
    user = [p for p in pools if p.kind != "system"]

    def vnet_use(
        role: str, subnet: IPv4Network, placed: list[PoolCapacity], per_node: Callable[[PoolCapacity], int]
    ) -> AddressUse:
        return AddressUse(
            config_key("clusters", name, "subnets", role),
            subnet,
            "addresses",
            sum(p.peak_nodes * per_node(p) for p in placed),
            addressing.usable_addresses(subnet),
            sum(p.max_nodes for p in placed),
            sum(p.peak_nodes for p in placed),
        )

    uses = [
        vnet_use("system", cluster.subnets.system, system, lambda p: 1),
        vnet_use("nodes", cluster.subnets.nodes, user, lambda p: 1),
    ]
    if cluster.cni == "podSubnet" and cluster.subnets.pods is not None:
        uses.append(vnet_use("pods", cluster.subnets.pods, pools, lambda p: p.pool.max_pods))
    if cluster.cni == "overlay":
        pod_cidr = config.network.pod_cidr
        uses.append(
            AddressUse(
                config_key("network", "podCidr"),
                pod_cidr,
                "nodes",
                sum(p.peak_nodes for p in pools),
                addressing.overlay_node_capacity(pod_cidr),
                sum(p.max_nodes for p in pools),
                sum(p.peak_nodes for p in pools),
            )
        )
    return uses


def plan_cluster(config: PlatformConfig, name: str) -> ClusterCapacity:
    pools = cluster_pools(name, config.clusters[name])
    if name in config.kafka_clusters():
        pools += [
            PoolCapacity(config_key("kafka", "strimzi", "nodePool"), name, pool_name, "kafka", pool)
            for pool_name, pool in kafka_plan.kafka_node_pools(config).items()
        ]
    if name in config.streaming_clusters():
        pools += [
            PoolCapacity(config_key("streaming", "pool"), name, pool_name, "streaming", pool)
            for pool_name, pool in streaming_plan.streaming_node_pools(config).items()
        ]
    return ClusterCapacity(name, pools, _address_uses(config, name, pools))


def plan_capacity(config: PlatformConfig) -> CapacityPlan:
    return CapacityPlan([plan_cluster(config, name) for name in config.clusters])


@dataclass(frozen=True)
class LimitBreach:
    key: str
    reason: str


def _n(value: int) -> str:
    return f"{value:,}"


def limit_breaches(cluster: ClusterCapacity) -> list[LimitBreach]:
    """AKS's node, pool and pod limits this cluster's plan exceeds."""
    breaches = []
    for pool in cluster.pools:
        if pool.max_nodes > limits.MAX_NODES_PER_POOL:
            breaches.append(
                LimitBreach(
                    f"{pool.key}.maxCount",
                    f"{_n(pool.max_nodes)} exceeds AKS's {_n(limits.MAX_NODES_PER_POOL)} nodes per pool",
                )
            )
    if cluster.max_nodes > limits.MAX_NODES_PER_CLUSTER:
        breaches.append(
            LimitBreach(
                config_key("clusters", cluster.key),
                f"the pools add up to {_n(cluster.max_nodes)} nodes, over AKS's "
                f"{_n(limits.MAX_NODES_PER_CLUSTER)} per cluster; split the fleet across clusters",
            )
        )
    if len(cluster.pools) > limits.MAX_POOLS_PER_CLUSTER:
        breaches.append(
            LimitBreach(
                config_key("clusters", cluster.key),
                f"{len(cluster.pools)} pools (with the system pool) exceed AKS's "
                f"{limits.MAX_POOLS_PER_CLUSTER} per cluster",
            )
        )
    return breaches


def quota_use(cluster: ClusterCapacity) -> list[tuple[PoolCapacity, int]]:
    """Per GPU pool: the Kueue quota its teams are promised, in GPUs (or MIG slices)."""
    return [(pool, sum(pool.gpu_pool.quotas.values())) for pool in cluster.gpu_pools]
